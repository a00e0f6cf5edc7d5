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

/// When a case's error is flagged. Two practices, both cited in DESIGN.md:
///   PyTorch's context-parallel tests (test/distributed/tensor/test_attention.py) accept a
///   context-parallel result within rtol = 1e-3 x world size of the single-device one for the
///   flash (bf16) kernels and 1e-5 for fp32 (efficient attention): the default `relative`
///   limit, per dtype and P; `fixed` replaces it for every case;
///   FlashAttention's tests (tests/test_flash_attn.py) accept a kernel whose max error against
///   an fp32 reference is at most twice a plain same-dtype implementation's: the distributed
///   error against `single_factor` x the single-rank computation's.
struct accuracy_tolerance {
    double fixed = std::numeric_limits<double>::quiet_NaN(); ///< NaN: the per-dtype rule
    double single_factor = 2.0;
    /// The relative limit of a case of `dtype` (fp32, bf16, fp16 or the long names) on `p` ranks.
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
    std::string dtype;
    tensor_errors dist{}, rms{}, single{};
    double worst() const;        ///< the largest distributed max_rel (NaN: none)
    double worst_single() const; ///< the largest single-rank max_rel
    /// What distribution adds: the largest distributed / single-rank max_rel over the tensors
    /// that have both (NaN: none has).
    double added() const;
    bool over_limit = false;  ///< worst() above the tolerance's limit
    bool over_single = false; ///< some tensor above single_factor x its single-rank error
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
