#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/elementwise.cuh"

#include "src/base/error.hpp"

#include <cmath>

namespace ringscale::kernels::cuda {

namespace {

struct adamw_scalars {
    float lr, beta1, beta2, eps, decay, one_m_b1, one_m_b2, bc1, bc2;
};

// __fmul_rn/__fadd_rn forbid FMA contraction, so each operation rounds as the CPU's does.
__global__ void adamw_kernel(adamw_scalars s, std::size_t n, float* param, const float* grad,
                             float* m, float* v) {
    RINGSCALE_GRID_STRIDE(k, n) {
        const float g = grad[k];
        const float mk = __fadd_rn(__fmul_rn(s.beta1, m[k]), __fmul_rn(s.one_m_b1, g));
        const float vk =
            __fadd_rn(__fmul_rn(s.beta2, v[k]), __fmul_rn(s.one_m_b2, __fmul_rn(g, g)));
        m[k] = mk;
        v[k] = vk;
        const float m_hat = __fdiv_rn(mk, s.bc1);
        const float v_hat = __fdiv_rn(vk, s.bc2);
        const float update = __fmul_rn(s.lr, __fdiv_rn(m_hat, __fadd_rn(__fsqrt_rn(v_hat), s.eps)));
        param[k] = __fsub_rn(__fmul_rn(param[k], s.decay), update);
    }
}

bool finite_nonneg(float x) {
    return std::isfinite(x) && x >= 0.0f;
}

} // namespace

void adamw_step_cuda(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                     const float* grad, float* m, float* v, void* stream) {
    RINGSCALE_REQUIRE(finite_nonneg(hp.lr) && finite_nonneg(hp.eps) &&
                          finite_nonneg(hp.weight_decay) && finite_nonneg(hp.beta1) &&
                          hp.beta1 < 1.0f && finite_nonneg(hp.beta2) && hp.beta2 < 1.0f,
                      "adamw_step_cuda: need finite lr, eps, weight_decay >= 0 and beta1, "
                      "beta2 in [0, 1)");
    RINGSCALE_REQUIRE(step >= 1, "adamw_step_cuda: step must be >= 1");
    if (n == 0)
        return;
    // Host scalars computed exactly as kernels::cpu::adamw_step does (bias correction in double).
    const double t = static_cast<double>(step);
    adamw_scalars s{};
    s.lr = hp.lr;
    s.beta1 = hp.beta1;
    s.beta2 = hp.beta2;
    s.eps = hp.eps;
    s.decay = 1.0f - hp.lr * hp.weight_decay;
    s.one_m_b1 = 1.0f - hp.beta1;
    s.one_m_b2 = 1.0f - hp.beta2;
    s.bc1 = static_cast<float>(1.0 - std::pow(static_cast<double>(hp.beta1), t));
    s.bc2 = static_cast<float>(1.0 - std::pow(static_cast<double>(hp.beta2), t));
    launch_elementwise(adamw_kernel, n, stream, s, n, param, grad, m, v);
}

} // namespace ringscale::kernels::cuda
