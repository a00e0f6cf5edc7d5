// The verdict of `ringscale-stats numerics` on one case's series (numerics.hpp has the rule
// against the floor). One order for every verdict, the first that holds wins: diverged (a
// non-finite value of the run, or a quantity past k x its floor) > no verdict (a series
// missing, no steps, or a reference that diverged) > not decided (the floor diverges as much)
// > the same training.
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

#include <map>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// The series of one case (schema::numerics_datasets names -> [steps]).
using numerics_data = std::map<std::string, std::vector<double>>;

/// The verdicts in their order: a larger value wins where verdicts meet (seeds pooled).
enum class numerics_kind { same = 0, not_decided = 1, no_verdict = 2, diverged = 3 };

/// One case's verdict.
struct numerics_verdict {
    numerics_kind kind = numerics_kind::same;
    int step = 0;         ///< where it diverged (or the reference did); 0 when none
    std::string quantity; ///< "loss", "grad_norm", "params"; for no_verdict the reason
    bool non_finite = false;
    double value = 0;       ///< the non-finite value where non_finite
    bool reference = false; ///< no_verdict because the reference diverged at `step`
    /// "the same training", "diverged at step s: loss +inf", "diverges at step s (loss)",
    /// "reference diverged at step s: no verdict", "no verdict (series missing)",
    /// "no verdict (no steps)", "not decided (the floor diverges as much)".
    std::string text() const;
    bool diverged() const { return kind == numerics_kind::diverged; }
};

/// The ulps of the reference value added to the floor (numerics.hpp's A_q).
inline constexpr double numerics_ulp_floor = 16 * 0x1p-24;
/// The floor's relative spread past which nothing is decided (above).
inline constexpr double numerics_floor_chaos = 0.1;

/// The verdict for one case's series at factor `k` (> 0). Pure.
numerics_verdict judge_numerics(const numerics_data& d, double k);

/// The verdict that wins of `a` and `b` (the earlier step where both are of one kind).
const numerics_verdict& worse(const numerics_verdict& a, const numerics_verdict& b);

} // namespace ringscale::analysis
