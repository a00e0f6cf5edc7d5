// `ringscale-stats accuracy`: each attention case's error against fp64 (the acc_* fields of its
// files; DESIGN.md, "Accuracy against fp64"), against P per scheme and dtype with its growth per
// doubling of P, against S at fixed P with its growth per doubling of S, and the cases whose
// error passes a tolerance. Pure: tables from pooled cases.
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/presentation/table.hpp"

#include <array>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ringscale::analysis {

/// The tensors measured, in schema::acc_tensors' order: O, LSE, dQ, dK, dV.
inline constexpr int accuracy_tensor_count = 5;
using tensor_errors = std::array<double, accuracy_tensor_count>;

/// When a case's error is flagged: one rule, measured against the dtype's own rounding r of each
/// tensor (the single-rank computation's error of the same rows in the same dtype; the dtype's
/// unit roundoff where that was not measured), so a P = 1 case is never flagged for rounding:
///   `limit`: the distributed error passes r by more than the dtype's allowance on P ranks
///   (dtypes::accuracy_allowance: PyTorch's context-parallel tests' rtol, 1e-3 x P for bf16 and
///   fp16, 1e-5 for fp32, test/distributed/tensor/test_attention.py); `fixed` replaces it;
///   `single`: it passes `single_factor` x the measured single-rank error (FlashAttention's
///   tests, tests/test_flash_attn.py: at most twice a plain same-dtype implementation's error);
///   `non-finite`: an error that overflowed (inf or NaN recorded): the worst there is.
struct accuracy_tolerance {
    double fixed = std::numeric_limits<double>::quiet_NaN(); ///< NaN: the per-dtype rule
    double single_factor = 2.0;
    /// The allowance of a case of `dtype` (any spelling of src/base/dtype_names.hpp) on `p`
    /// ranks; NaN for a dtype the table does not know.
    double limit(const std::string& dtype, int p) const;
    /// One line naming the rules in use.
    std::string describe() const;
};

/// One case's errors: the median over its launches of each recorded field, NaN where absent.
struct accuracy_case {
    const pooled_case* pc = nullptr;
    std::string label; ///< the case without P
    int p = 1;
    double seq_len = 0;
    std::string dtype; ///< the short name (fp32, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2)
    /// Per tensor, the median over launches; +inf where any launch recorded a non-finite value.
    tensor_errors dist{}, rms{}, single{};
    double worst() const;        ///< the largest distributed max_rel (NaN: none; inf: overflow)
    double worst_single() const; ///< the largest single-rank max_rel
    /// What distribution adds: worst() / worst_single() (NaN without a finite single-rank one).
    double added() const;
    bool over_limit = false;  ///< some tensor past its rounding plus the allowance
    bool over_single = false; ///< some tensor above single_factor x its single-rank error
    bool non_finite = false;  ///< some accuracy field recorded inf or NaN (an overflow)
    bool flagged() const { return over_limit || over_single || non_finite; }
};

/// Cases that differ only along one axis (P, or S at a fixed P), ascending.
struct accuracy_series {
    std::string label; ///< what they share (with " P=p" for a series along S)
    std::vector<const accuracy_case*> points;
    tensor_errors growth{};  ///< per tensor: the factor per doubling of the axis (NaN: < 2 points)
    double growth_worst = 0; ///< the same for the worst tensor of each case
};

struct accuracy_result {
    std::vector<accuracy_case> cases; ///< by label, then P
    std::vector<accuracy_series> over_p, over_s;
    accuracy_tolerance tolerance;
    param_list common;       ///< what every case shares (left out of the tables' labels)
    std::size_t flagged = 0; ///< cases over a limit
};

/// The growth of y per doubling of x: 2^slope of the least-squares line of log2 y on log2 x over
/// the points with x, y > 0 and finite; NaN with fewer than two distinct x. Pure.
double growth_per_doubling(const std::vector<std::pair<double, double>>& xy);

/// Every pooled case that recorded its accuracy, with its series and flags.
accuracy_result accuracy_of(const std::vector<pooled_case>& pooled,
                            const accuracy_tolerance& tolerance);

/// One row per case: its errors by tensor (distributed max_rel), the worst, the single-rank
/// worst, what distribution adds (accuracy_case::added) and the flags.
table accuracy_case_table(const accuracy_result& r);

/// One row per series of `r` along `axis` ("P": r.over_p, "S": r.over_s): the axis' range and
/// the growth per doubling by tensor.
table accuracy_growth_table(const accuracy_result& r, const char* axis);

} // namespace ringscale::analysis
