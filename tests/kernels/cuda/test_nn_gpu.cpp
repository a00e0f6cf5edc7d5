// CUDA cross-entropy and the cuBLAS dense layer against the CPU reference kernels on seeded
// inputs (tolerances stated per test). Tests that touch a device skip without one; the shape
// checks run before any CUDA call, so they run everywhere.
#include "kernels/cpu/cross_entropy.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cuda/cross_entropy.cuh"
#include "kernels/cuda/cublas_context.hpp"
#include "kernels/cuda/dense.cuh"
#include "kernels/random.hpp"
#include "kernels/reference/linear_ref.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;
using namespace ringscale::kernels::reference;
namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;

using ringscale::testing_support::expect_close;
using ringscale::testing_support::seeded;

namespace {

std::vector<std::int32_t> seeded_targets(std::size_t n, std::size_t vocab, std::uint64_t seed) {
    std::vector<std::int32_t> t(n);
    for (std::size_t k = 0; k < n; ++k)
        t[k] = static_cast<std::int32_t>(mix64(seed ^ mix64(k)) % vocab);
    return t;
}

// Per-row losses of the CPU reference: row t's loss alone, with the global normalisation.
std::vector<float> row_losses_ref(std::size_t tokens, std::size_t vocab, std::size_t total,
                                  const std::vector<float>& logits,
                                  const std::vector<std::int32_t>& targets) {
    std::vector<float> rows(tokens);
    for (std::size_t t = 0; t < tokens; ++t)
        rows[t] = static_cast<float>(
            cross_entropy_fwd(1, vocab, total, logits.data() + t * vocab, targets.data() + t));
    return rows;
}

} // namespace

// fp32 softmax statistics vs double on the CPU: lse is off by a few ulp of |lse| <~ 16, so each
// row loss within ~1e-5/total absolute, each softmax entry within ~1e-5 relative.
TEST(gpu_cross_entropy, fused_forward_backward_in_place_matches_cpu) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t tokens = 37, vocab = 1003, total = 3 * tokens; // one shard of three
    auto logits = seeded(tokens * vocab, 1, 8.0f);
    const auto targets = seeded_targets(tokens, vocab, 2);
    logits[0 * vocab + targets[0]] = 30.0f; // a confident row: loss ~ 0, gradient cancels
    std::vector<float> grad_ref(logits.size());
    const double loss_ref =
        cross_entropy_fwd_bwd(tokens, vocab, total, logits.data(), targets.data(), grad_ref.data());
    const auto rows_ref = row_losses_ref(tokens, vocab, total, logits, targets);

    rt::device_buffer<float> d_logits(logits), d_rows(tokens);
    rt::device_buffer<std::int32_t> d_targets(targets);
    rt::device_buffer<double> d_loss(1);
    // dlogits overwrites logits, as the header allows.
    kc::cross_entropy_fwd_bwd_cuda(tokens, vocab, total, d_logits.data(), d_targets.data(),
                                   d_rows.data(), d_loss.data(), d_logits.data());
    rt::device_synchronize();
    const float scale = 1.0f / static_cast<float>(total);
    expect_close(d_rows.to_host(), rows_ref, 1e-5f * scale, 1e-5f, "row_loss");
    EXPECT_NEAR(d_loss.to_host()[0], loss_ref, 1e-5 * loss_ref);
    expect_close(d_logits.to_host(), grad_ref, 1e-6f * scale, 1e-5f, "dlogits");
}

TEST(gpu_cross_entropy, separate_forward_and_scaled_backward_match_cpu) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t tokens = 300, vocab = 50, total = tokens; // vocab below the block size
    const auto logits = seeded(tokens * vocab, 3, 4.0f);
    const auto targets = seeded_targets(tokens, vocab, 4);
    const float dloss = 0.5f;
    const double loss_ref = cross_entropy_fwd(tokens, vocab, total, logits.data(), targets.data());
    std::vector<float> grad_ref(logits.size());
    cross_entropy_bwd(tokens, vocab, total, logits.data(), targets.data(), grad_ref.data(), dloss);

    rt::device_buffer<float> d_logits(logits), d_rows(tokens), d_grad(logits.size());
    rt::device_buffer<std::int32_t> d_targets(targets);
    rt::device_buffer<double> d_loss(1);
    kc::cross_entropy_fwd_cuda(tokens, vocab, total, d_logits.data(), d_targets.data(),
                               d_rows.data(), d_loss.data());
    kc::cross_entropy_bwd_cuda(tokens, vocab, total, d_logits.data(), d_targets.data(),
                               d_grad.data(), dloss);
    rt::device_synchronize();
    // Same fp32-vs-double argument as above; the gradient scale is dloss / total.
    EXPECT_NEAR(d_loss.to_host()[0], loss_ref, 1e-5 * loss_ref);
    expect_close(d_grad.to_host(), grad_ref, 1e-6f * dloss / total, 1e-5f, "dlogits");
    EXPECT_EQ(d_logits.to_host(), logits); // out of place: logits untouched
}

TEST(gpu_cross_entropy, bad_target_poisons_only_its_row) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const std::size_t tokens = 4, vocab = 10;
    const auto logits = seeded(tokens * vocab, 5);
    std::vector<std::int32_t> targets = {1, -1, 3, 10}; // rows 1 and 3 out of range
    rt::device_buffer<float> d_logits(logits), d_rows(tokens), d_grad(logits.size());
    rt::device_buffer<std::int32_t> d_targets(targets);
    kc::cross_entropy_fwd_bwd_cuda(tokens, vocab, tokens, d_logits.data(), d_targets.data(),
                                   d_rows.data(), nullptr, d_grad.data());
    rt::device_synchronize();
    const auto rows = d_rows.to_host(), grad = d_grad.to_host();
    EXPECT_TRUE(std::isfinite(rows[0]) && std::isfinite(rows[2]));
    EXPECT_TRUE(std::isnan(rows[1]) && std::isnan(rows[3]));
    for (std::size_t v = 0; v < vocab; ++v) {
        EXPECT_TRUE(std::isfinite(grad[0 * vocab + v]) && std::isfinite(grad[2 * vocab + v]));
        EXPECT_TRUE(std::isnan(grad[1 * vocab + v]) && std::isnan(grad[3 * vocab + v]));
    }
}

TEST(gpu_cross_entropy, refuses_bad_shapes_before_any_launch) {
    float f = 0.0f;
    double d = 0.0;
    std::int32_t t = 0;
    EXPECT_THROW(kc::cross_entropy_fwd_cuda(0, 10, 1, &f, &t, &f, &d), ringscale::config_error);
    EXPECT_THROW(kc::cross_entropy_bwd_cuda(4, 0, 4, &f, &t, &f), ringscale::config_error);
    EXPECT_THROW(kc::cross_entropy_fwd_bwd_cuda(4, 10, 3, &f, &t, &f, &d, &f),
                 ringscale::config_error);
}

// Shapes with tokens, in and out all different (and none a multiple of 32), so a swapped
// transpose or leading dimension in the row-major -> column-major mapping either fails in
// cuBLAS or gives O(1) errors. Full fp32 (no TF32): reductions of K <= 67 terms of size <= 1
// are within ~1e-6 of the double reference; 1e-4 absolute + 1e-5 relative is loose for
// that and tight for any layout mistake.
TEST(gpu_dense, forward_and_backward_match_cpu_reference) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const linear_shape s{67, 45, 29};
    const auto x = seeded(s.tokens * s.in, 11), w = seeded(s.out * s.in, 12);
    const auto b = seeded(s.out, 13), dy = seeded(s.tokens * s.out, 14);
    const auto dw0 = seeded(s.out * s.in, 15), db0 = seeded(s.out, 16); // accumulated into
    std::vector<float> y_ref(s.tokens * s.out), dx_ref(s.tokens * s.in), dw_ref = dw0, db_ref = db0;
    linear_fwd_ref(s, x.data(), w.data(), b.data(), y_ref.data());
    linear_bwd_ref(s, x.data(), w.data(), dy.data(), dx_ref.data(), dw_ref.data(), db_ref.data());

    kc::cublas_context ctx;
    rt::device_buffer<float> d_x(x), d_w(w), d_b(b), d_y(s.tokens * s.out), d_dy(dy),
        d_dx(s.tokens * s.in), d_dw(dw0), d_db(db0);
    kc::linear_fwd_cuda(ctx, s, d_x.data(), d_w.data(), d_b.data(), d_y.data());
    kc::linear_bwd_cuda(ctx, s, d_x.data(), d_w.data(), d_dy.data(), d_dx.data(), d_dw.data(),
                        d_db.data());
    rt::device_synchronize();
    expect_close(d_y.to_host(), y_ref, 1e-4f, 1e-5f, "y");
    expect_close(d_dx.to_host(), dx_ref, 1e-4f, 1e-5f, "dx");
    expect_close(d_dw.to_host(), dw_ref, 1e-4f, 1e-5f, "dw (accumulated)");
    expect_close(d_db.to_host(), db_ref, 1e-5f, 1e-5f, "db (accumulated, double sum)");
}

TEST(gpu_dense, optional_outputs_skip_and_dw_accumulates_twice) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const linear_shape s{5, 3, 7};
    const auto x = seeded(s.tokens * s.in, 21), w = seeded(s.out * s.in, 22);
    const auto dy = seeded(s.tokens * s.out, 23);
    std::vector<float> y_ref(s.tokens * s.out), dw_ref(s.out * s.in, 0.0f);
    linear_fwd_ref(s, x.data(), w.data(), nullptr, y_ref.data());
    for (int step = 0; step < 2; ++step) // two micro-batches: dw doubles
        linear_bwd_ref(s, x.data(), w.data(), dy.data(), nullptr, dw_ref.data(), nullptr);

    kc::cublas_context ctx;
    rt::device_buffer<float> d_x(x), d_w(w), d_y(std::vector<float>(s.tokens * s.out, 9.0f)),
        d_dy(dy), d_dw(std::vector<float>(s.out * s.in, 0.0f));
    kc::linear_fwd_cuda(ctx, s, d_x.data(), d_w.data(), nullptr, d_y.data()); // overwrites 9s
    for (int step = 0; step < 2; ++step)
        kc::linear_bwd_cuda(ctx, s, d_x.data(), d_w.data(), d_dy.data(), nullptr, d_dw.data(),
                            nullptr);
    rt::device_synchronize();
    expect_close(d_y.to_host(), y_ref, 1e-5f, 1e-5f, "y (no bias)");
    expect_close(d_dw.to_host(), dw_ref, 1e-5f, 1e-5f, "dw");
}

// A GEMM big enough for cuBLAS's tiled kernels against the OpenBLAS version: fp32 with K = 256
// within 1e-4 (absolute and relative); TF32 rounds inputs to 10 mantissa bits (~5e-4 relative
// each), so K = 256 products of size <= 1 sum to ~4e-3 typical error on O(5) outputs: 3e-2.
TEST(gpu_dense, large_shape_fp32_and_tf32) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const linear_shape s{512, 256, 384};
    const auto x = seeded(s.tokens * s.in, 31), w = seeded(s.out * s.in, 32);
    const auto b = seeded(s.out, 33);
    std::vector<float> y_ref(s.tokens * s.out);
    linear_fwd(s, x.data(), w.data(), b.data(), y_ref.data());

    rt::device_buffer<float> d_x(x), d_w(w), d_b(b), d_y(s.tokens * s.out);
    for (const bool tf32 : {false, true}) {
        kc::cublas_context made(nullptr, tf32);
        kc::cublas_context ctx = std::move(made); // the handle moves with the context
        EXPECT_EQ(made.handle(), nullptr);
        kc::linear_fwd_cuda(ctx, s, d_x.data(), d_w.data(), d_b.data(), d_y.data());
        rt::device_synchronize();
        expect_close(d_y.to_host(), y_ref, tf32 ? 3e-2f : 1e-4f, tf32 ? 0.0f : 1e-4f,
                     tf32 ? "y (tf32)" : "y (fp32)");
    }
}

TEST(gpu_dense, refuses_bad_shapes_before_any_launch) {
    RINGSCALE_SKIP_WITHOUT_DEVICE(); // a cublas_context needs a device
    kc::cublas_context ctx;
    float f = 0.0f;
    EXPECT_THROW(kc::linear_fwd_cuda(ctx, {0, 3, 4}, &f, &f, nullptr, &f), ringscale::config_error);
    EXPECT_THROW(kc::linear_bwd_cuda(ctx, {2, 0, 4}, &f, &f, &f, &f, &f, nullptr),
                 ringscale::config_error);
}
