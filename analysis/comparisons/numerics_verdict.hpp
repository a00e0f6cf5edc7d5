// The verdict of `ringscale-stats numerics` on one case's series (numerics.hpp has the rule
// against the floor). One order for every verdict, the first that holds wins: diverged (a
// non-finite value of the run, or a quantity past k x its floor) > no verdict (a series
// missing, no steps, or a reference that diverged) > beyond the dtype's budget against fp64 >
// not decided (the floor diverges as much) > the same training.
//
// "Beyond the dtype's budget against fp64": a bf16, fp16 or fp8 case whose |loss - fp64_loss|
// or |grad_norm - fp64_grad_norm| passes the dtype's budget at some step (the series
// fp64_budget_loss and fp64_budget_grad_norm, jobs/numerics_budget.hpp has the formula). It
// catches what the floor cannot: a defect that the same-dtype reference and the floor share (a
// GEMM kernel every run calls) keeps a case within k x floor while it trains off fp64. Files
// without the budget series (fp32, or written before it) are judged as before.
//
// "Not decided": where the floor's own parameter error passes a tenth of the largest parameter
// (param_abs_err / param_rel_err), runs that differ only in the order of their sums already
// follow different trainings, and k x that floor would pass a defect that moves every
// parameter by a fifth of its size. 10% is above what one rounding of every value costs in the
// coarsest dtype the training emulates (fp8 E4M3's unit roundoff, 2^-4 = 6.25%), so a floor
// that is still rounding noise decides; a floor past it is chaos, not noise, and no verdict
// can rest on it. (The loss has no such scale: a loss near 0 is a trained model, not a spread.)
// A floor run that overflowed is such a floor too.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// The series of one case (schema::numerics_datasets names -> [steps]).
using numerics_data = std::map<std::string, std::vector<double>>;

/// The verdicts in their order: a larger value wins where verdicts meet (seeds pooled).
enum class numerics_kind {
    same = 0,
    not_decided = 1,
    beyond_budget = 2,
    no_verdict = 3,
    diverged = 4
};

/// One case's verdict.
struct numerics_verdict {
    numerics_kind kind = numerics_kind::same;
    int step = 0;         ///< where it diverged (or the reference did); 0 when none
    std::string quantity; ///< "loss", "grad_norm", "params"; for no_verdict the reason
    bool non_finite = false;
    double value = 0;       ///< the non-finite value where non_finite
    bool reference = false; ///< no_verdict because the reference diverged at `step`
    /// The largest ratio of a gap to fp64 to the dtype's budget over the steps and quantities
    /// (for beyond_budget: at `step`, of `quantity`); NaN where the case has no budget or the
    /// verdict came before it was read (diverged, no verdict).
    double budget_ratio = NAN;
    /// "the same training", "diverged at step s: loss +inf", "diverges at step s (loss)",
    /// "reference diverged at step s: no verdict", "no verdict (series missing)",
    /// "no verdict (no steps)", "beyond the dtype's budget against fp64 at step s (loss,
    /// 3.1x)", "not decided (the floor diverges as much)".
    std::string text() const;
    bool diverged() const { return kind == numerics_kind::diverged; }
};

/// The ulps of the reference value added to the floor (numerics.hpp's A_q).
inline constexpr double numerics_ulp_floor = 16 * 0x1p-24;
/// The floor's relative spread past which nothing is decided (above).
inline constexpr double numerics_floor_chaos = 0.1;

/// The largest ratio to the dtype's budget against fp64 over the steps and quantities (loss,
/// grad_norm) and where the budget is first passed (step 0 when never): NaN ratio where the
/// series lack the budget or the fp64 reference. A non-finite gap is an infinite ratio. Pure.
struct budget_check {
    double max_ratio = NAN;
    int first_step = 0;       ///< the first step past the budget
    std::string quantity;     ///< its quantity ("loss", "grad_norm")
    double first_ratio = NAN; ///< its ratio
};
budget_check check_fp64_budget(const numerics_data& d);

/// The verdict for one case's series at factor `k` (> 0). Pure.
numerics_verdict judge_numerics(const numerics_data& d, double k);

/// The verdict that wins of `a` and `b` (the earlier step where both are of one kind).
const numerics_verdict& worse(const numerics_verdict& a, const numerics_verdict& b);

} // namespace ringscale::analysis
