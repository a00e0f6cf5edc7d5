// The one decision rule: whether side b of a comparison is faster, slower, the
// same, or not decided, from the launches per side, the CI of the time ratio, the threshold,
// the case's noise and the marks' estimated effects. The launcher's closing table, crossover,
// compare (and its exit code), history and the report's plots all call decide(); DESIGN.md
// ("One decision rule") gives the table. Pure.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace ringscale::analysis {

/// A verdict on b against a.
enum class decision { faster, slower, tie, not_decided };

/// The exit codes a verdict gives where a gate asked to fail (compare --fail-on, history
/// --fail-on): 1 a regression, 6 not decided (DESIGN.md, "Exit codes"); 0 otherwise.
inline constexpr int exit_regression = 1;
inline constexpr int exit_not_decided = 6;

/// What the rule weighs.
struct decision_inputs {
    std::size_t launches_a = 0, launches_b = 0; ///< launches per side, marked ones included
    double ratio_lo = NAN, ratio_hi = NAN;      ///< CI of time_b / time_a (> 1: b is slower)
    double threshold = 0.05;                    ///< a relative margin within which it is a tie
    double noise = NAN;            ///< the case's launch-to-launch noise (log SD); NaN: not known
    double mark_a = 1, mark_b = 1; ///< largest estimated effect of a side's marks on its whole
                                   ///< time (factor hi, 1 = none; machine::largest_effect)
    /// The smallest effect of a side's marks among its launches (1 when a launch of it is
    /// unmarked, or when the caller knows only the largest): the rule weighs the difference
    /// between the sides, each side's largest against the other's smallest, so a machine as
    /// busy before as after decides as a quiet one.
    double least_mark_a = 1, least_mark_b = 1;
    std::string mark_reason_a, mark_reason_b; ///< the marks' reasons, for the verdict's reason
};

/// A verdict and why.
struct decision_result {
    decision verdict = decision::not_decided;
    /// "one launch", "no launch", "no interval", "marked: <reason> could account for the
    /// +8% margin", "within noise", "beyond threshold", "within threshold".
    std::string reason;
    /// Set when a mark weighed on the verdict but could not account for it (its effect above
    /// the noise, below the margin): "oversubscribed ... (x1.10) cannot account for ...".
    std::string note;
};

/// The rule, in this order: fewer than 2 launches on a side -> not decided (one launch / no
/// launch); no finite CI -> not decided (no interval); each side's mark is weighed net of
/// the other side's: mark_b / least_mark_a and mark_a / least_mark_b (at least 1), and a net
/// mark whose effect (log) is at most the case's noise is ignored; CI above 1 + threshold ->
/// slower, unless b's mark could account for the margin (lo / mark_b <= 1 + threshold) -> not
/// decided (marked); CI below 1 / (1 + threshold) -> faster, unless a's mark could (hi * mark_a >=
/// 1 / (1 + threshold)); CI inside the threshold band -> tie, unless a mark could hide a difference
/// beyond it (lo / mark_b < 1 / (1 + threshold) or hi * mark_a > 1 + threshold); otherwise not
/// decided (within noise). Pure.
decision_result decide(const decision_inputs& in);

/// "faster", "slower", "tie", "not decided".
const char* to_string(decision d);

/// "slower" or "not decided (one launch)": the verdict with its reason where not decided.
std::string verdict_text(const decision_result& r);

/// The exit code of a gate that fails on a regression: exit_regression when b is slower,
/// exit_not_decided when not decided, 0 otherwise. Pure.
int gate_exit_code(const decision_result& r);

} // namespace ringscale::analysis
