// The declared range of each number option of ringscale-stats, checked before any work: a
// value outside it (NaN included) is one line and exit 2, never a wrapped or absurd figure.
#pragma once

#include <cstddef>
#include <string>

namespace ringscale::analysis {

/// A closed or open interval of allowed values; `whole`: integers only.
struct number_range {
    double lo;
    double hi;
    bool lo_open = false;
    bool hi_open = false;
    bool whole = false;
};

/// Ranks of a prediction (--predict P, p=): whole, 1 .. 1e9.
inline constexpr number_range predict_ranks{1, 1e9, false, false, true};
/// Sequence lengths of a prediction (S=): 1 .. 2^40 tokens.
inline constexpr number_range predict_tokens{1, 1099511627776.0, false, false, true};
/// Probabilities strictly between 0 and 1 (--alpha, --confidence).
inline constexpr number_range probability{0, 1, true, true};
/// Positive rates (--link-gbs GB/s, --peak-gflops GFLOP/s, --peak TFLOP/s): (0, 1e9].
inline constexpr number_range positive_rate{0, 1e9, true};
/// A slowdown threshold in percent: 0 .. 1000.
inline constexpr number_range threshold_percent{0, 1000};
/// A base rank count (--base-p): whole, 1 .. 1e9.
inline constexpr number_range rank_count{1, 1e9, false, false, true};

/// The most bootstrap replicates (--bootstrap): each is a resample and a refit, so 1e6 took
/// minutes on a small study; 1e5 bounds that to about a minute (predict notes its progress).
inline constexpr std::size_t max_bootstrap = 100000;

/// `value` when it lies in `range`; else config_error "--OPTION: VALUE is not <range>". Pure.
double in_range(const std::string& option, double value, const number_range& range);

/// The range as text: "a whole number from 1 to 1e+09", "a number in (0, 1)". Pure.
std::string describe(const number_range& range);

} // namespace ringscale::analysis
