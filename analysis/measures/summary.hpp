// Per-case summary: iteration-time statistics (an iteration's time is its slowest rank's),
// per-rank imbalance, time shares and throughput in the job's unit, gated by sanity checks.
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/statistics/descriptive.hpp"
#include "sanity.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis {

struct summary_options {
    bool remove_outliers = false;
    double level = 0.95;
    sanity_limits limits;
};

/// One summary row; times in seconds, rates in base units (FLOP/s, B/s, tokens/s).
struct case_summary {
    const pooled_case* source = nullptr;
    std::string status = "ok"; ///< ok, or "failed" / "skipped" when no launch succeeded
    std::string error;         ///< first failure message of a case with no ok launch
    std::size_t launches = 0;
    std::size_t not_ok = 0;
    std::size_t n = 0;        ///< iterations used (after outlier removal when requested)
    std::size_t outliers = 0; ///< Tukey outliers found among all measured iterations
    bool outliers_removed = false;
    bool incomplete = false;
    estimate median{};
    double p10 = 0, p90 = 0, p99 = 0, min = 0, mean = 0, cv = 0;
    /// Slowest / mean of per-rank median times, taken per launch; over launches, the median
    /// of those per-launch values (a straggler in one launch does not move it).
    double imbalance = 0;
    double comm_share = 0;                ///< sum comm_wait_s / sum time_s (NaN when not recorded)
    double compute_share = 0;             ///< sum compute_s / sum time_s (NaN when not recorded)
    std::optional<double> flops_per_rank; ///< FLOP/s per rank at the median time
    std::optional<double> mfu_percent;    ///< flops_per_rank as % of the dense peak (peak.hpp)
    std::string mfu_note;                 ///< why a GPU case has no MFU (unknown device)
    std::optional<double> tokens_per_s;
    std::optional<double> algbw;            ///< B/s
    std::optional<double> busbw;            ///< B/s
    std::optional<double> comm_bw_per_rank; ///< comm_bytes_per_iter / median time, B/s
    std::vector<std::string> rejected;      ///< sanity-gate reasons; the figures above are cleared
    /// Column key (summary table) -> what its cell shows instead of a number: "no-op" (not
    /// rated: nothing was moved) or "impossible" (above the hardware's ceiling).
    std::map<std::string, std::string> flags;
};

/// Summarise one pooled case (works for cases with no ok launch: status rows only).
case_summary summarize(const pooled_case& c, const summary_options& opt);

/// Summaries of all pooled cases, in order.
std::vector<case_summary> summarize_all(const std::vector<pooled_case>& cases,
                                        const summary_options& opt);

/// Mean per rank and iteration of compute_s, comm_wait_s and the rest of time_s, in seconds
/// (pooled over launches); NaN parts when the datasets are absent.
struct time_breakdown {
    double compute_s, comm_wait_s, other_s;
};
time_breakdown breakdown(const pooled_case& c);

} // namespace ringscale::analysis
