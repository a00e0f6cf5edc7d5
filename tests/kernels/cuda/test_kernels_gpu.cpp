// CUDA kernels against the CPU reference kernels on seeded inputs (fp32 tolerances stated per
// test), plus the device buffer's peak-bytes accounting. Every test skips without a device.
#include "kernels/cpu/adamw.hpp"
#include "kernels/cpu/gelu.hpp"
#include "kernels/cpu/rmsnorm.hpp"
#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/softmax_merge.cuh"
#include "kernels/random.hpp"
#include "kernels/softmax_merge.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;

using ringscale::testing_support::expect_close;
using ringscale::testing_support::seeded;

TEST(gpu_softmax_merge, matches_cpu_including_masked_rows) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::int64_t rows = 37, dim = 200; // dim not a multiple of the block size
    auto o_a = seeded(rows * dim, 1), o_b = seeded(rows * dim, 2);
    auto lse_a = seeded(rows, 3, 5.0f), lse_b = seeded(rows, 4, 5.0f);
    const float ninf = -std::numeric_limits<float>::infinity();
    lse_a[0] = ninf;            // one side masked
    lse_b[1] = ninf;            // the other side masked
    lse_a[2] = lse_b[2] = ninf; // both masked: zeros, -inf
    std::vector<float> o_ref(rows * dim), lse_ref(rows);
    softmax_merge(o_a.data(), lse_a.data(), o_b.data(), lse_b.data(), rows, dim, o_ref.data(),
                  lse_ref.data());

    rt::device_buffer<float> d_oa(o_a), d_ob(o_b), d_la(lse_a), d_lb(lse_b);
    // Outputs alias the a-side inputs, as softmax_merge_into uses them.
    kc::softmax_merge_cuda(d_oa.data(), d_la.data(), d_ob.data(), d_lb.data(), rows, dim,
                           d_oa.data(), d_la.data());
    rt::device_synchronize();
    // fp32: expf/log1pf differ from the host libm by a few ulp, and the GPU may fuse a·x + b.
    expect_close(d_oa.to_host(), o_ref, 1e-6f, 1e-5f, "o");
    expect_close(d_la.to_host(), lse_ref, 1e-6f, 1e-6f, "lse");
}

TEST(gpu_rmsnorm, forward_and_backward_match_cpu) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t rows = 19, dim = 300;
    const float eps = 1e-5f;
    const auto x = seeded(rows * dim, 11), gamma = seeded(dim, 12), dy = seeded(rows * dim, 13);
    const auto dgamma0 = seeded(dim, 14); // dγ accumulates into what is there
    std::vector<float> y_ref(rows * dim), inv_ref(rows), dx_ref(rows * dim), dg_ref = dgamma0;
    rmsnorm_fwd(rows, dim, eps, x.data(), gamma.data(), y_ref.data(), inv_ref.data());
    rmsnorm_bwd(rows, dim, x.data(), gamma.data(), inv_ref.data(), dy.data(), dx_ref.data(),
                dg_ref.data());

    rt::device_buffer<float> d_x(x), d_g(gamma), d_y(rows * dim), d_inv(rows), d_dy(dy),
        d_dg(dgamma0);
    kc::rmsnorm_fwd_cuda(rows, dim, eps, d_x.data(), d_g.data(), d_y.data(), d_inv.data());
    // dx overwrites dy in place, as the header allows.
    kc::rmsnorm_bwd_cuda(rows, dim, d_x.data(), d_g.data(), d_inv.data(), d_dy.data(), d_dy.data(),
                         d_dg.data());
    rt::device_synchronize();
    // fp32 accumulation on the GPU vs double on the CPU: relative error ~ dim · 2^-24.
    expect_close(d_y.to_host(), y_ref, 1e-5f, 1e-5f, "y");
    expect_close(d_inv.to_host(), inv_ref, 0.0f, 1e-5f, "inv_rms");
    expect_close(d_dy.to_host(), dx_ref, 1e-5f, 1e-4f, "dx");
    expect_close(d_dg.to_host(), dg_ref, 1e-5f, 1e-4f, "dgamma");
}

TEST(gpu_gelu, forward_and_backward_match_cpu) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t n = 100003; // several blocks and a ragged tail
    const auto x = seeded(n, 21, 6.0f), dy = seeded(n, 22);
    std::vector<float> y_ref(n), dx_ref(n);
    gelu_fwd(n, x.data(), y_ref.data());
    gelu_bwd(n, x.data(), dy.data(), dx_ref.data());

    rt::device_buffer<float> d_x(x), d_y(n), d_dy(dy);
    kc::gelu_fwd_cuda(n, d_x.data(), d_y.data());
    kc::gelu_bwd_cuda(n, d_x.data(), d_dy.data(), d_dy.data()); // in place on dy
    rt::device_synchronize();
    // tanhf differs from the host's by a couple of ulp; outputs are O(1) to O(6).
    expect_close(d_y.to_host(), y_ref, 1e-6f, 1e-5f, "y");
    // dx: where |u| >= 4, 1 - t*t keeps about 2 ulp of 1 (2.4e-7), scaled by
    // 0.5*|v|*du*|dy| <= 14 for |v| <= 6: up to 3.3e-6 absolute, where the CPU's clamped tanh
    // gives exactly 0 (measured on an H200: 1.07e-6).
    expect_close(d_dy.to_host(), dx_ref, 4e-6f, 1e-5f, "dx");
}

TEST(gpu_adamw, three_steps_match_cpu) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t n = 4099;
    adamw_params hp;
    hp.lr = 1e-2f;
    hp.weight_decay = 0.1f;
    auto p_ref = seeded(n, 31), m_ref = std::vector<float>(n, 0.0f), v_ref = m_ref;
    rt::device_buffer<float> d_p(p_ref), d_m(m_ref), d_v(v_ref), d_g(n);
    for (std::int64_t step = 1; step <= 3; ++step) {
        const auto g = seeded(n, 40 + static_cast<std::uint64_t>(step));
        adamw_step(hp, step, n, p_ref.data(), g.data(), m_ref.data(), v_ref.data());
        d_g.copy_from_host(g.data(), n);
        kc::adamw_step_cuda(hp, step, n, d_p.data(), d_g.data(), d_m.data(), d_v.data());
    }
    rt::device_synchronize();
    // Operations round one by one (no FMA) with IEEE div/sqrt: expected bit-exact; allow 1e-7.
    expect_close(d_p.to_host(), p_ref, 1e-7f, 1e-7f, "param");
    expect_close(d_m.to_host(), m_ref, 1e-7f, 1e-7f, "m");
    expect_close(d_v.to_host(), v_ref, 1e-7f, 1e-7f, "v");
}

TEST(gpu_device_buffer, peak_bytes_track_allocations_and_moves) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    rt::reset_device_bytes_peak();
    const std::size_t base = rt::device_bytes_current();
    {
        rt::device_buffer<float> a(1000);
        rt::device_buffer<double> b(500);
        EXPECT_EQ(rt::device_bytes_current(), base + 8000);
        rt::device_buffer<float> c(std::move(a)); // moves do not allocate
        EXPECT_EQ(rt::device_bytes_current(), base + 8000);
        EXPECT_EQ(a.data(), nullptr);
        EXPECT_EQ(c.size(), 1000u);
    }
    EXPECT_EQ(rt::device_bytes_current(), base);
    EXPECT_EQ(rt::device_bytes_peak(), base + 8000);
}

TEST(gpu_event_timer, measures_non_negative_time) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    rt::device_buffer<float> x(seeded(1 << 20, 51)), y(1 << 20);
    rt::cuda_event_timer timer;
    timer.start();
    kc::gelu_fwd_cuda(x.size(), x.data(), y.data());
    timer.stop();
    EXPECT_GE(timer.elapsed_s(), 0.0);
}
