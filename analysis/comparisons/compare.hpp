// Comparing two result sets case by case: change of the median with a two-level (launches,
// then iterations) bootstrap CI and p-value, Holm's correction across cases, the iteration-
// level Mann-Whitney U test and Cliff's delta for reference, and the regression verdict a CI
// gate uses. Launches are the unit of replication: with fewer than two launches on a side
// launch-to-launch noise is unknown, and a difference is reported as unconfirmed, never as
// a regression.
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/statistics/rank_tests.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::analysis {

struct compare_options {
    double threshold = 0.05; ///< relative slowdown that counts as a regression
    double alpha = 0.05;     ///< significance level for Holm-adjusted p-values
    /// Launches are the unit of replication when both sides have at least this many (>= 2);
    /// otherwise the verdict can only be "unconfirmed" or "no significant change".
    std::size_t min_launches = 2;
    std::size_t replicates = 2000; ///< bootstrap replicates (raised with many cases)
    std::uint64_t seed = 1;        ///< bootstrap seed; case i uses seed + i
    double level = 0.95;           ///< level of the change's CI
    /// --skip-marked: leave marked launches out. By default they stay and weigh through the
    /// decision rule by their estimated effect.
    bool skip_marked = false;
};

/// Power at which compare reports the smallest detectable change.
constexpr double detect_power = 0.9;

/// The one decision rule's verdict (analysis/statistics/decision.hpp) on NEW against BASE:
/// slower -> regression, faster -> improvement, tie -> unchanged; a slower or faster verdict
/// whose p-value (Holm over the cases) is not below alpha is not decided ("not significant");
/// not_decided carries the rule's reason (case_comparison::reason). contended: with
/// --skip-marked, every launch of a side was marked and left out: nothing is compared.
enum class verdict { regression, improvement, unchanged, not_decided, contended };

/// "regression", "improvement", "within threshold", "not decided",
/// "not decided (every launch marked)".
const char* to_string(verdict v);

struct case_comparison {
    const pooled_case* base = nullptr; ///< without marked launches (what the times compare)
    const pooled_case* next = nullptr;
    /// Every launch of each side: memory does not depend on what else ran on the machine.
    const pooled_case* base_all = nullptr;
    const pooled_case* next_all = nullptr;
    double base_median = 0; ///< s
    double new_median = 0;  ///< s
    double change = 0;      ///< new / base - 1 (positive: slower)
    double change_lo = 0;   ///< CI of the change (two-level bootstrap; iterations only when
    double change_hi = 0;   ///< unit is "iterations")
    std::string unit;       ///< "launches" (two-level bootstrap) or "iterations"
    std::size_t n_base = 0, n_new = 0; ///< launches or iterations, per `unit`
    std::size_t launches_base = 0, launches_new = 0;
    mann_whitney_result test; ///< iterations, new against base: delta > 0 means new is slower
    double p_value = 1;       ///< launches: bootstrap p of no change; iterations: test.p_value
    double p_adjusted = 1;    ///< Holm over all matched cases
    /// Launches only (NaN otherwise): launch-to-launch noise, the larger side's SD of log
    /// launch medians; and the smallest slowdown detected with 90% power at the Bonferroni
    /// level alpha / (matched cases), Holm's first step (launch_test.hpp).
    double launch_noise = std::nan("");
    double detectable = std::nan("");
    verdict result = verdict::not_decided;
    std::string reason; ///< the rule's reason where not decided ("one launch", "marked: ...")
    std::string note;   ///< a mark that weighed but could not account for the margin
    /// Marked launches on each side, and why (the first one's mark): weighed by the rule, or
    /// with --skip-marked left out (a side with none left is not compared: contended).
    std::size_t marked_base = 0, marked_new = 0;
    std::string marked_why;
};

struct comparison {
    /// The matched cases as compared (without their marked launches under --skip-marked):
    /// what `matched` points into.
    std::shared_ptr<std::vector<pooled_case>> unmarked;
    std::vector<case_comparison> matched;
    std::vector<const pooled_case*> only_base;
    std::vector<const pooled_case*> only_new;
    bool any_regression() const;
    /// Matched cases the rule did not decide (or, with --skip-marked, left no launch).
    std::size_t undecided() const;
    /// Matched cases with fewer than min_launches launches on a side (noise unknown).
    std::size_t iteration_level() const;
};

/// compare's exit code (time only; memory regressions add to it in the command): 1 on a
/// regression; with `fail_on` (--fail-on regression) 6 when a case was not decided and none
/// regressed; else 0. The decision rule's gate_exit_code over the cases.
int compare_exit_code(const comparison& cmp, bool fail_on);

/// One line on what the comparison could have seen, from the case whose launch noise hides
/// the most: the smallest slowdown detected with 90% power, and the launches per side that
/// would detect twice `threshold` there. Empty when no case has launches as its unit.
std::string detectability_note(const comparison& cmp, double threshold, double alpha);

/// Match cases by key and compare them by the one decision rule (a marked launch weighs by
/// its estimated effect; with opt.skip_marked it is left out, and counted). Throws config_error
/// (exit 2) when no case matches, naming the parameters that differ between the closest pair.
comparison compare_sets(const std::vector<pooled_case>& base, const std::vector<pooled_case>& next,
                        const compare_options& opt);

} // namespace ringscale::analysis
