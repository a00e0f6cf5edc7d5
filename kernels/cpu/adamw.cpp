#include "kernels/cpu/adamw.hpp"

#include "kernels/parallel.hpp"

#include <cmath>

namespace ringscale::kernels::cpu {

void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                const float* grad, float* m, float* v) {
    adamw_check(hp, step);
    // Scalars depend only on (hp, step), never on n or the slice, so every shard of a buffer
    // computes each element with exactly the same operations as the whole buffer would.
    const double t = static_cast<double>(step);
    const float bc1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hp.beta1), t));
    const float bc2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hp.beta2), t));
    const float decay = 1.0f - hp.lr * hp.weight_decay;
    const float one_m_b1 = 1.0f - hp.beta1, one_m_b2 = 1.0f - hp.beta2;
    const float b1 = hp.beta1, b2 = hp.beta2, lr = hp.lr, eps = hp.eps;
    // Elementwise: each thread's range computes exactly what the serial loop would. The
    // scalars are copies, so the compiler need not reload them after every store.
    parallel_for(n, std::size_t{1} << 15, [=](std::size_t begin, std::size_t end) {
        for (std::size_t k = begin; k < end; ++k) {
            const float g = grad[k];
            const float mk = b1 * m[k] + one_m_b1 * g;
            const float vk = b2 * v[k] + one_m_b2 * (g * g);
            m[k] = mk;
            v[k] = vk;
            const float m_hat = mk / bc1;
            const float v_hat = vk / bc2;
            param[k] = param[k] * decay - lr * (m_hat / (std::sqrt(v_hat) + eps));
        }
    });
}

} // namespace ringscale::kernels::cpu
