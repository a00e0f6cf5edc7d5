// CUDA AdamW: the device twin of kernels/adamw.hpp (torch.optim.AdamW's update, decoupled
// weight decay), fp32 and elementwise. Declarations only, free of CUDA types.
#pragma once

#include "kernels/adamw.hpp"

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cuda {

/// One AdamW update of n elements, as kernels::cpu::adamw_step: param, m, v updated in place,
/// grad read only, `step` the 1-based update count. The arithmetic is rounded operation by
/// operation as on the CPU (no FMA contraction), so results should match the CPU kernel to
/// the last bit up to sqrt/div rounding. DEVICE pointers, caller-owned, non-overlapping;
/// asynchronous on `stream` (a cudaStream_t; nullptr: default). Throws config_error on bad
/// hyperparameters or step < 1.
void adamw_step_cuda(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                     const float* grad, float* m, float* v, void* stream = nullptr);

} // namespace ringscale::kernels::cuda
