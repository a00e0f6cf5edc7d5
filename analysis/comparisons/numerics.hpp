// `ringscale-stats numerics`: train_step --numerics cases: each configuration's
// divergence from the single-rank run of the same dtype, step by step, against the floor that
// the order of floating-point reductions alone causes, and a verdict. Pure: tables from the
// series of the cases' `numerics` groups (src/base/results_schema.hpp, numerics_datasets).
//
// The rule. For each quantity q of a step (in this order: the loss of the step, the global
// gradient norm of the step, the parameters after it) the divergence d_q(s) is |loss - ref|,
// |grad_norm - ref| and max |p - p_ref|. Its allowance is k x max(F_q(s), A_q(s)): F_q(s) the
// floor reached by step s (the running max of the floor series: a floor run that happened to
// agree at one step does not make the next one stricter), A_q(s) = 16 fp32 ulps of the
// reference value (16 * 2^-24 * |ref_q(s)|, for params of the largest parameter): the noise of
// the forward's own fp32 sums, which the floor runs (same forward, reordered gradient sum)
// cannot show. The first (step, quantity) past its allowance is where the configuration
// diverges; a non-finite value of the run is a divergence at its step, one of the reference
// leaves no verdict (numerics_verdict.hpp has the order of the verdicts).
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/comparisons/numerics_verdict.hpp"
#include "analysis/presentation/table.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// The loss divergence |loss - ref_loss| over the steps: mean (MAE), root mean square and max;
/// NaN-free: a non-finite step makes all three infinite.
struct divergence_summary {
    double mae = 0, rmse = 0, max = 0;
};
divergence_summary summarize(const std::vector<double>& a, const std::vector<double>& b);
/// A summary of nothing: all NaN (shown as "-").
divergence_summary no_summary();

/// Mean and 95% Student-t interval of `v` (lo = hi = mean for one value). Pure.
struct mean_ci {
    double mean = 0;
    double lo = std::numeric_limits<double>::quiet_NaN();
    double hi = std::numeric_limits<double>::quiet_NaN();
};
mean_ci mean_with_ci(const std::vector<double>& v);

/// One case of the view: its configuration, P, dtype, seed and figures.
struct numerics_case {
    const pooled_case* pc = nullptr;
    std::string config; ///< the label without P and data_seed
    int p = 1;
    std::string dtype;
    std::string seed;
    int steps = 0;
    divergence_summary vs_ref, floor; ///< the loss against the reference; the floor's own
    /// The loss against the fp64 reference (fp64_loss) and the floor's (floor_fp64_loss, its
    /// worst per step); NaN where the file has no fp64 series (before the fp64 reference).
    divergence_summary vs_fp64 = no_summary(), floor_fp64 = no_summary();
    double param_err_last = 0, param_rel_last = 0, floor_param_last = 0;
    numerics_verdict verdict;
    /// Costs in seconds (rank 0) where this case computed them, else NaN: the fp64 reference,
    /// the same-dtype reference, the floor's runs (rank 0's share), the followed run.
    double fp64_s = NAN, ref_s = NAN, floor_s = NAN, run_s = NAN;
};

struct numerics_result {
    double k = 2;
    std::vector<numerics_case> cases; ///< by config, P, seed
    std::size_t diverged = 0, no_verdict = 0, beyond_budget = 0, not_decided = 0;
    /// "N of M cases diverge" and the cases without a verdict or undecided, where any.
    std::string count_line() const;
};

/// Every pooled case with a numerics group (its first launch's series), judged at `k`.
numerics_result numerics_of(const std::vector<pooled_case>& pooled, double k);

/// One row per case: P, dtype, seed, MAE/RMSE/max of the loss against the reference and of
/// the floor, the last step's parameter error, MAE/RMSE/max of the loss against the fp64
/// reference and the floor's max against it, the largest ratio to the dtype's budget against
/// fp64 ("-" without one), the verdict.
table numerics_case_table(const numerics_result& r);
/// One row per configuration and P over its seeds: max |Δloss| mean with its 95% CI, cases
/// diverged of seeds, the earliest divergence; then the growth per doubling of P of the mean.
table numerics_config_table(const numerics_result& r);

} // namespace ringscale::analysis
