// AdamW on a flat fp32 span on the CPU, split over the rank's threads (kernels/parallel).
// Purely elementwise and deterministic: updating any partition of a buffer slice by slice
// (ZeRO-1 / FSDP shards) gives bit-for-bit the same result as updating it whole.
#pragma once

#include "kernels/adamw.hpp"

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cpu {

/// One AdamW update of n elements, in place on param[n], m[n] (first moment) and v[n]
/// (second moment); grad[n] is read only. `step` is this update's 1-based count (1 on the
/// first call), used for bias correction. For each k:
///   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  m̂ = m/(1−β1^step);  v̂ = v/(1−β2^step);
///   p = p·(1 − lr·wd) − lr·m̂/(sqrt(v̂) + eps).
/// Start m and v at zero. n may be 0. Buffers must not overlap.
void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                const float* grad, float* m, float* v);

} // namespace ringscale::kernels::cpu
