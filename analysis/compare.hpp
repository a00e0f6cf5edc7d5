// Comparing two result sets case by case: change of the median, a Mann-Whitney U test with
// Holm's correction across cases, Cliff's delta, and the regression verdict a CI gate uses.
#pragma once

#include "cases.hpp"
#include "rank_tests.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

struct compare_options {
    double threshold = 0.05; ///< relative slowdown that counts as a regression
    double alpha = 0.05;     ///< significance level for Holm-adjusted p-values
    /// Launches are the unit of replication when both sides have at least this many;
    /// otherwise iterations are (and the table says so).
    std::size_t min_launches = 4;
};

enum class verdict { regression, improvement, unchanged, not_significant };

/// "regression", "improvement", "within threshold", "no significant change".
const char* to_string(verdict v);

struct case_comparison {
    const pooled_case* base = nullptr;
    const pooled_case* next = nullptr;
    double base_median = 0; ///< s
    double new_median = 0;  ///< s
    double change = 0;      ///< new / base - 1 (positive: slower)
    std::string unit;       ///< "iterations" or "launches"
    std::size_t n_base = 0, n_new = 0;
    mann_whitney_result test; ///< new against base: delta > 0 means new is slower
    double p_adjusted = 1;
    verdict result = verdict::not_significant;
};

struct comparison {
    std::vector<case_comparison> matched;
    std::vector<const pooled_case*> only_base;
    std::vector<const pooled_case*> only_new;
    bool any_regression() const;
};

/// Match cases by key and compare them. Throws config_error (exit 2) when no case matches,
/// naming the parameters that differ between the closest pair.
comparison compare_sets(const std::vector<pooled_case>& base, const std::vector<pooled_case>& next,
                        const compare_options& opt);

} // namespace ringscale::analysis
