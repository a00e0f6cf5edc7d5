// The element types a results file's `dtype` may name: one table, the launcher's spellings
// (the long names it records, the short ones --dtype takes) with each type's unit roundoff and
// the accuracy allowance `ringscale-stats accuracy` applies to it (DESIGN.md, "Accuracy against
// fp64"). Below kernels, jobs and analysis, so all of them read the same names.
#pragma once

#include <string>
#include <vector>

namespace ringscale::dtypes {

/// One element type. `name` is what a results file records, `short_name` what --dtype takes
/// (both are accepted wherever a dtype is read). "fp8" is the training recipe (E4M3 activations
/// and weights, E5M2 gradients), priced and judged as E4M3.
struct dtype_info {
    const char* name;       ///< "float32", "bfloat16", "float16", "fp8", "float8_e4m3", ...
    const char* short_name; ///< "fp32", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2"
    double unit_roundoff;   ///< 2^-(mantissa bits + 1): fp32 2^-24, bf16 2^-8, e4m3 2^-4
    int bytes;              ///< storage per element
};

/// Every known dtype, in the order above (fp32, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2).
const std::vector<dtype_info>& all();

/// The dtype spelled `text` (either spelling, exact case), nullptr when none is.
const dtype_info* find(const std::string& text);

/// Every accepted spelling (long and short names), for the reader's enumerated-value check.
const std::vector<std::string>& spellings();

/// The accuracy allowance: how much relative error (max over a tensor, normwise, against fp64)
/// distribution may add on `p` ranks to the dtype's own rounding before a case is flagged.
/// PyTorch's context-parallel tests' rtol: 1e-5 for fp32, 1e-3 x P for bf16 and fp16; the fp8
/// types scale the 16-bit one by their unit roundoff over bf16's (x16 for E4M3, x32 for E5M2).
double accuracy_allowance(const dtype_info& d, int p);

/// One line naming the allowance of every dtype (for the accuracy view's caption).
std::string describe_allowances();

} // namespace ringscale::dtypes
