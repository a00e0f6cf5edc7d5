// The linear layers' GEMM (kernels/cpu/linear_gemm.hpp), both implementations, against plain
// loops in double: every layout the layers use (A and B each row-major or transposed), partial
// 6-row blocks and 64-column panels, k across blocks of 2048, overwrite and accumulate, with a
// bias row and without.
#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/cpu/linear_gemm.hpp"
#include "src/base/error.hpp"

#include "tests/support/ramp.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace ringscale::kernels::cpu;

namespace {

using ringscale::testing_support::ramp;

struct dims {
    std::int64_t m, n, k;
};
// 1x1x1; rows and columns short of a block; k = 2048 exactly, and one block and a part.
const dims k_shapes[] = {{1, 1, 1},     {7, 48, 128},   {13, 70, 513},
                         {6, 64, 2048}, {9, 130, 2100}, {64, 192, 64}};

/// Runs C (+)= A·B for one layout and implementation, A and B stored as the layout says, and
/// checks it against plain loops in double.
void check(const dims& d, bool a_transposed, bool b_transposed, bool accumulate, bool with_bias,
           gemm_impl impl) {
    const std::vector<float> a = ramp(d.m * d.k, 1), b = ramp(d.k * d.n, 2); // a(i, kk), b(kk, j)
    std::vector<float> as(a.size()), bs(b.size());
    for (std::int64_t i = 0; i < d.m; ++i)
        for (std::int64_t kk = 0; kk < d.k; ++kk)
            as[a_transposed ? kk * d.m + i : i * d.k + kk] = a[i * d.k + kk];
    for (std::int64_t kk = 0; kk < d.k; ++kk)
        for (std::int64_t j = 0; j < d.n; ++j)
            bs[b_transposed ? j * d.k + kk : kk * d.n + j] = b[kk * d.n + j];
    const gemm_view av = a_transposed ? gemm_view{as.data(), 1, d.m} : gemm_view{as.data(), d.k, 1};
    const gemm_view bv = b_transposed ? gemm_view{bs.data(), 1, d.k} : gemm_view{bs.data(), d.n, 1};
    const std::vector<float> c0 = ramp(d.m * d.n, 3), bias = ramp(d.n, 4);
    std::vector<float> c = c0;
    linear_gemm(d.m, d.n, d.k, av, bv, c.data(), d.n, accumulate, with_bias ? bias.data() : nullptr,
                impl);
    for (std::int64_t i = 0; i < d.m; ++i)
        for (std::int64_t j = 0; j < d.n; ++j) {
            double want = (accumulate ? c0[i * d.n + j] : 0.0) + (with_bias ? bias[j] : 0.0);
            for (std::int64_t kk = 0; kk < d.k; ++kk)
                want += double(a[i * d.k + kk]) * b[kk * d.n + j];
            ASSERT_NEAR(c[i * d.n + j], want, 1e-5 * double(d.k)) << "at " << i << ", " << j;
        }
}

void check_all_layouts(gemm_impl impl) {
    for (const dims& d : k_shapes)
        for (int layout = 0; layout < 16; ++layout) {
            const bool at = layout & 1, bt = layout & 2, acc = layout & 4, bias = layout & 8;
            SCOPED_TRACE(std::to_string(d.m) + "x" + std::to_string(d.n) + "x" +
                         std::to_string(d.k) + (at ? " A^T" : "") + (bt ? " B^T" : "") +
                         (acc ? " accumulate" : "") + (bias ? " bias" : ""));
            check(d, at, bt, acc, bias, impl);
        }
}

} // namespace

TEST(linear_gemm, own_tiles_match_plain_loops_in_every_layout) {
    if (!tile_gemm_avx512())
        GTEST_SKIP() << "the own GEMM needs AVX-512F, which this CPU lacks";
    check_all_layouts(gemm_impl::own);
}

// C written as attention heads: every element where gemm_heads puts it, bit for bit what the
// plain GEMM computes, for calls starting inside a sequence (row0), sequences shorter and
// longer than a 6-row block, heads of 64 and 128 columns, k in one block and across two.
TEST(linear_gemm, c_as_heads_puts_each_element_of_the_plain_product_where_bhsd_says) {
    if (!gemm_heads_fused(64, gemm_impl::own))
        GTEST_SKIP() << "C as heads is written only by the own GEMM, which needs AVX-512F";
    EXPECT_FALSE(gemm_heads_fused(64, gemm_impl::openblas));
    EXPECT_FALSE(gemm_heads_fused(32, gemm_impl::own));
    struct heads_case {
        std::int64_t seq, d, heads, seqs, row0, m, k;
    };
    for (const heads_case& h :
         {heads_case{5, 64, 2, 3, 0, 15, 40}, heads_case{16, 128, 3, 2, 7, 20, 130},
          heads_case{9, 64, 1, 4, 4, 29, 2100}}) {
        SCOPED_TRACE("seq " + std::to_string(h.seq) + " d " + std::to_string(h.d) + " row0 " +
                     std::to_string(h.row0) + " k " + std::to_string(h.k));
        const std::int64_t n = h.heads * h.d, tokens = h.seq * h.seqs;
        const std::vector<float> a = ramp(h.m * h.k, 1), b = ramp(h.k * n, 2), bias = ramp(n, 4);
        std::vector<float> plain(h.m * n);
        linear_gemm(h.m, n, h.k, {a.data(), h.k, 1}, {b.data(), n, 1}, plain.data(), n, false,
                    bias.data(), gemm_impl::own);
        std::vector<float> heads(tokens * n, -7.0f);
        linear_gemm(h.m, n, h.k, {a.data(), h.k, 1}, {b.data(), n, 1}, heads.data(), 0, false,
                    bias.data(), gemm_impl::own, {h.seq, h.d, h.row0});
        std::vector<float> want(tokens * n, -7.0f); // untouched outside rows row0..row0 + m
        for (std::int64_t i = 0; i < h.m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                const std::int64_t r = h.row0 + i, head = r / h.seq * h.heads + j / h.d;
                want[(head * h.seq + r % h.seq) * h.d + j % h.d] = plain[i * n + j];
            }
        EXPECT_EQ(heads, want);
    }
    std::vector<float> c(64 * 64);
    const std::vector<float> a = ramp(64, 1), b = ramp(64 * 64, 2);
    EXPECT_THROW(linear_gemm(1, 64, 1, {a.data(), 1, 1}, {b.data(), 64, 1}, c.data(), 0, false,
                             nullptr, gemm_impl::openblas, {4, 64, 0}),
                 ringscale::config_error);
    EXPECT_THROW(linear_gemm(1, 96, 1, {a.data(), 1, 1}, {b.data(), 96, 1}, c.data(), 0, false,
                             nullptr, gemm_impl::own, {4, 64, 0}),
                 ringscale::config_error); // 96 columns are not whole heads of 64
}

TEST(linear_gemm, openblas_matches_plain_loops_in_every_layout) {
    check_all_layouts(gemm_impl::openblas);
}

TEST(linear_gemm, an_empty_product_overwrites_or_keeps_c_and_no_rows_touch_nothing) {
    // k = 0: C = 0 (or C kept, accumulating); m = 0: nothing written.
    for (const gemm_impl impl : {gemm_impl::own, gemm_impl::openblas}) {
        const std::vector<float> a(8, 1.0f), b(8, 1.0f), c0 = ramp(6, 4);
        std::vector<float> c = c0;
        linear_gemm(2, 3, 0, {a.data(), 1, 1}, {b.data(), 3, 1}, c.data(), 3, true, nullptr, impl);
        EXPECT_EQ(c, c0);
        linear_gemm(2, 3, 0, {a.data(), 1, 1}, {b.data(), 3, 1}, c.data(), 3, false, nullptr, impl);
        EXPECT_EQ(c, std::vector<float>(6, 0.0f));
        c = c0;
        linear_gemm(0, 3, 4, {a.data(), 4, 1}, {b.data(), 3, 1}, c.data(), 3, false, nullptr, impl);
        EXPECT_EQ(c, c0);
    }
}

TEST(linear_gemm, the_choice_is_named_and_own_only_where_the_tiles_run) {
    const gemm_impl impl = linear_gemm_impl();
    EXPECT_EQ(std::string(gemm_impl_name(impl)), impl == gemm_impl::own ? "own" : "openblas");
    if (!tile_gemm_avx512()) {
        EXPECT_EQ(impl, gemm_impl::openblas);
    }
}
