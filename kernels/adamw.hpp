// AdamW (Loshchilov & Hutter; the update torch.optim.AdamW performs): its hyperparameters and
// their check, shared by every backend (the update itself: kernels/cpu/adamw.hpp,
// kernels/cuda/adamw.cuh; on an executor, kernels/kernels.hpp).
#pragma once

#include <cstdint>

namespace ringscale::kernels {

/// Hyperparameters: learning rate, moment decay rates, denominator epsilon, and decoupled
/// weight decay (applied as p ← p·(1 − lr·weight_decay), not through the gradient).
struct adamw_params {
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weight_decay = 0.01f;
};

/// Throws config_error unless lr >= 0, 0 <= beta1, beta2 < 1, eps >= 0, weight_decay >= 0
/// (all finite) and step >= 1.
void adamw_check(const adamw_params& hp, std::int64_t step);

} // namespace ringscale::kernels
