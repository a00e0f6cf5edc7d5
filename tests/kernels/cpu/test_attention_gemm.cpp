// The attention kernels' tile products (kernels/cpu/attention_gemm.hpp) against plain loops in
// double, on shapes with partial row blocks and partial 64-column panels, with and without
// packed operands; and the packing layouts themselves on exact values.
#include "kernels/cpu/attention_gemm.hpp"

#include "tests/support/ramp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace ringscale::kernels::cpu;

namespace {

using ringscale::testing_support::ramp;

/// C[i, j] = c0[i, j] + alpha * sum_kk a(i, kk) b(kk, j) in double.
template <class A, class B>
std::vector<double> naive(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, A a, B b,
                          const std::vector<float>& c0) {
    std::vector<double> c(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::int64_t kk = 0; kk < k; ++kk)
                sum += double(a(i, kk)) * b(kk, j);
            c[i * n + j] = (c0.empty() ? 0.0 : c0[i * n + j]) + alpha * sum;
        }
    return c;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, std::int64_t k) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 * double(k)) << "at " << i;
}

struct dims {
    std::int64_t m, n, k;
};
const dims k_shapes[] = {{1, 1, 1},     {7, 48, 128},  {32, 48, 128},  {32, 128, 48},
                         {32, 130, 64}, {13, 64, 300}, {256, 128, 256}};

} // namespace

TEST(attention_gemm, pack_transposed_puts_columns_in_zero_padded_panels) {
    // Whole panels, each 16-row group's tail (the AVX-512 path's masked gathers), an empty group.
    const dims shapes[] = {{0, 70, 3},  {0, 1, 64},    {0, 17, 128},
                           {0, 48, 64}, {0, 256, 128}, {0, 130, 64}};
    for (const dims& d : shapes) {
        const std::vector<float> src = ramp(d.n * d.k, 1);
        std::vector<float> dst(static_cast<std::size_t>(packed_size(d.n, d.k)), -1.0f);
        ASSERT_EQ(dst.size(), static_cast<std::size_t>((d.n + 63) / 64 * 64 * d.k));
        pack_transposed(src.data(), d.n, d.k, dst.data());
        const std::int64_t cols = (d.n + 63) / 64 * 64;
        for (std::int64_t j = 0; j < cols; ++j)
            for (std::int64_t kk = 0; kk < d.k; ++kk)
                ASSERT_EQ(dst[j / 64 * 64 * d.k + kk * 64 + j % 64],
                          j < d.n ? src[j * d.k + kk] : 0.0f)
                    << "n=" << d.n << " k=" << d.k << " j=" << j << " kk=" << kk;
    }
}

TEST(attention_gemm, pack_panels_copies_rows_into_zero_padded_panels) {
    // dims: n columns of k rows, read at a row stride of n + 3; the padding must come out 0
    // whatever the buffer held (NaN here).
    const dims shapes[] = {{0, 1, 5}, {0, 17, 64}, {0, 48, 3}, {0, 64, 130}, {0, 130, 7}};
    for (const dims d : shapes) {
        SCOPED_TRACE(std::to_string(d.n) + " x " + std::to_string(d.k));
        const std::int64_t ld = d.n + 3;
        const std::vector<float> src = ramp(d.k * ld, 3);
        std::vector<float> dst(static_cast<std::size_t>(packed_size(d.n, d.k)),
                               std::numeric_limits<float>::quiet_NaN());
        pack_panels(src.data(), d.k, d.n, ld, dst.data());
        const std::int64_t cols = (d.n + 63) / 64 * 64;
        for (std::int64_t j = 0; j < cols; ++j)
            for (std::int64_t kk = 0; kk < d.k; ++kk)
                ASSERT_EQ(dst[j / 64 * 64 * d.k + kk * 64 + j % 64],
                          j < d.n ? src[kk * ld + j] : 0.0f)
                    << "column " << j << ", row " << kk;
    }
}

TEST(attention_gemm, nt_matches_plain_loops_and_leaves_row_maxima_by_lane) {
    for (const dims d : k_shapes) {
        SCOPED_TRACE(std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k));
        const std::vector<float> a = ramp(d.m * d.k, 2), b = ramp(d.n * d.k, 3);
        std::vector<float> bt(static_cast<std::size_t>(packed_size(d.n, d.k)));
        pack_transposed(b.data(), d.n, d.k, bt.data());
        std::vector<float> c(static_cast<std::size_t>(d.m * d.n)), lanes(16 * d.m);
        std::fill(lanes.begin(), lanes.end(), -std::numeric_limits<float>::infinity());
        const bool fused = tile_gemm_nt(d.m, d.n, d.k, 0.5f, a.data(), b.data(), bt.data(),
                                        c.data(), d.n, lanes.data());
        const auto want = naive(
            d.m, d.n, d.k, 0.5, [&](auto i, auto kk) { return a[i * d.k + kk]; },
            [&](auto kk, auto j) { return b[j * d.k + kk]; }, {});
        expect_near(c, want, d.k);
        EXPECT_EQ(fused, tile_gemm_avx512() && d.k <= 128);
        for (std::int64_t i = 0; fused && i < d.m; ++i)
            for (std::int64_t l = 0; l < 16; ++l) {
                float m = -std::numeric_limits<float>::infinity();
                for (std::int64_t j = l; j < d.n; j += 16)
                    m = std::max(m, c[i * d.n + j]);
                EXPECT_EQ(lanes[16 * i + l], m);
            }
    }
}

TEST(attention_gemm, nn_and_tn_accumulate_as_plain_loops_packed_or_not) {
    for (const dims d : k_shapes) {
        SCOPED_TRACE(std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k));
        const std::vector<float> a = ramp(d.m * d.k, 4), b = ramp(d.k * d.n, 5);
        const std::vector<float> c0 = ramp(d.m * d.n, 6);
        const auto want_nn = naive(
            d.m, d.n, d.k, 1.0, [&](auto i, auto kk) { return a[i * d.k + kk]; },
            [&](auto kk, auto j) { return b[kk * d.n + j]; }, c0);
        std::vector<float> c = c0;
        tile_gemm_nn_acc(d.m, d.n, d.k, a.data(), d.k, b.data(), d.n, c.data(), d.n);
        expect_near(c, want_nn, d.k);
        // Packed with 5 rows more than the product uses (a causal tile ends early).
        std::vector<float> tall = b;
        tall.resize(b.size() + 5 * d.n, 7.0f);
        std::vector<float> panels(static_cast<std::size_t>(packed_size(d.n, d.k + 5)));
        pack_panels(tall.data(), d.k + 5, d.n, d.n, panels.data());
        c = c0;
        tile_gemm_nn_acc(d.m, d.n, d.k, a.data(), d.k, b.data(), d.n, c.data(), d.n, panels.data(),
                         d.k + 5);
        expect_near(c, want_nn, d.k);
        // A stored [k, m]: the same product through its transpose.
        std::vector<float> at(a.size());
        for (std::int64_t i = 0; i < d.m; ++i)
            for (std::int64_t kk = 0; kk < d.k; ++kk)
                at[kk * d.m + i] = a[i * d.k + kk];
        c = c0;
        tile_gemm_tn_acc(d.m, d.n, d.k, at.data(), d.m, b.data(), d.n, c.data(), d.n);
        expect_near(c, want_nn, d.k);
    }
}

// B's rows exactly a panel (64 floats) apart are read in place, not copied: the product of
// fewer columns leaves C's other columns alone, whatever B holds past them (NaN here).
TEST(attention_gemm, rows_a_panel_wide_are_read_in_place_and_only_c_columns_stored) {
    for (const dims d : {dims{13, 40, 300}, dims{6, 64, 64}, dims{32, 17, 130}}) {
        SCOPED_TRACE(std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k));
        const std::vector<float> a = ramp(d.m * d.k, 4), at_src = ramp(d.k * d.m, 8);
        std::vector<float> b = ramp(d.k * 64, 5);
        for (std::int64_t kk = 0; kk < d.k; ++kk)
            for (std::int64_t j = d.n; j < 64; ++j)
                b[kk * 64 + j] = std::numeric_limits<float>::quiet_NaN();
        const std::vector<float> c0 = ramp(d.m * 64, 6);
        // The product over C's n columns; C's columns past n as they were.
        auto want_for = [&](auto a_at) {
            auto want = naive(
                d.m, 64, d.k, 1.0, a_at,
                [&](auto kk, auto j) { return j < d.n ? b[kk * 64 + j] : 0.0f; }, c0);
            for (std::int64_t i = 0; i < d.m; ++i)
                for (std::int64_t j = d.n; j < 64; ++j)
                    want[i * 64 + j] = c0[i * 64 + j];
            return want;
        };
        std::vector<float> c = c0; // C at stride 64 too: its columns past n must keep c0
        tile_gemm_nn_acc(d.m, d.n, d.k, a.data(), d.k, b.data(), 64, c.data(), 64);
        expect_near(c, want_for([&](auto i, auto kk) { return a[i * d.k + kk]; }), d.k);
        c = c0; // A stored [k, m]
        tile_gemm_tn_acc(d.m, d.n, d.k, at_src.data(), d.m, b.data(), 64, c.data(), 64);
        expect_near(c, want_for([&](auto i, auto kk) { return at_src[kk * d.m + i]; }), d.k);
    }
}

TEST(attention_gemm, a_prefetch_hint_changes_nothing_and_an_empty_product_leaves_c) {
    const dims d{32, 130, 64};
    const std::vector<float> a = ramp(d.m * d.k, 8), b = ramp(d.n * d.k, 9);
    std::vector<float> bt(static_cast<std::size_t>(packed_size(d.n, d.k)));
    pack_transposed(b.data(), d.n, d.k, bt.data());
    const std::vector<float> next = ramp(4096, 10); // what a caller reads next
    std::vector<float> plain(static_cast<std::size_t>(d.m * d.n), -1.0f), hinted = plain;
    tile_gemm_nt(d.m, d.n, d.k, 0.5f, a.data(), b.data(), bt.data(), plain.data(), d.n);
    tile_gemm_nt(d.m, d.n, d.k, 0.5f, a.data(), b.data(), bt.data(), hinted.data(), d.n, nullptr,
                 next.data(), static_cast<std::int64_t>(next.size()));
    EXPECT_EQ(hinted, plain);
    // No rows, no columns, no depth: C as it was, a hint or not (its slices are per call).
    const std::vector<float> c0 = ramp(d.m * d.n, 11);
    std::vector<float> c = c0;
    tile_gemm_nn_acc(0, d.n, d.k, a.data(), d.k, b.data(), d.n, c.data(), d.n, nullptr, 0,
                     next.data(), static_cast<std::int64_t>(next.size()));
    tile_gemm_nn_acc(d.m, 0, d.k, a.data(), d.k, b.data(), d.n, c.data(), d.n, nullptr, 0,
                     next.data(), static_cast<std::int64_t>(next.size()));
    tile_gemm_nn_acc(d.m, d.n, 0, a.data(), d.k, b.data(), d.n, c.data(), d.n);
    tile_gemm_tn_acc(0, d.n, d.k, a.data(), 1, b.data(), d.n, c.data(), d.n);
    EXPECT_EQ(c, c0);
}
