#include "kernels/cpu/linear_gemm.hpp"

#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/cpu/tile_micro.hpp"
#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <cblas.h>

namespace ringscale::kernels::cpu {

namespace {

gemm_impl choose_impl() {
    const char* e = std::getenv("RINGSCALE_LINEAR_GEMM");
    bool own = false;
    if (e && *e) {
        RINGSCALE_REQUIRE(std::strcmp(e, "own") == 0 || std::strcmp(e, "openblas") == 0,
                          "RINGSCALE_LINEAR_GEMM must be 'own' or 'openblas' (got '" +
                              terminal_text(e) + "')");
        own = std::strcmp(e, "own") == 0;
    } else {
#ifdef RINGSCALE_HAVE_AVX512_TILES
        __builtin_cpu_init();
        own = __builtin_cpu_is("amd") != 0;
#endif
    }
    return own && tile_gemm_avx512() ? gemm_impl::own : gemm_impl::openblas;
}

/// C = A·B (+ C) (+ bias) by OpenBLAS: each view row-major (cs 1) or its transpose (rs 1).
void blas_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gemm_view a, gemm_view b, float* c,
               std::int64_t ldc, bool accumulate, const float* bias) {
    if (bias) { // added to C first, so that the product accumulates onto it
        for (std::int64_t i = 0; i < m; ++i) {
            float* row = c + i * ldc;
            for (std::int64_t j = 0; j < n; ++j)
                row[j] = accumulate ? row[j] + bias[j] : bias[j];
        }
        accumulate = true;
    }
    const bool ta = a.cs != 1, tb = b.cs != 1;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a.p,
                static_cast<int>(ta ? a.cs : a.rs), b.p, static_cast<int>(tb ? b.cs : b.rs),
                accumulate ? 1.0f : 0.0f, c, static_cast<int>(ldc));
}

#ifdef RINGSCALE_HAVE_AVX512_TILES

constexpr std::int64_t k_block = 2048; // k per block: a panel of B up to 2048 x 64, 512 KiB, in L2
constexpr std::int64_t k_block_columns = 512; // the same where A is read by columns
constexpr std::int64_t k_cols = 16 * tile::k_nv;

/// This thread's panel of B, allocated once (64-byte aligned).
float* panel_buffer() {
    struct buffer {
        float* p;
        buffer() : p(static_cast<float*>(std::aligned_alloc(64, k_block * k_cols * 4))) {
            if (!p)
                throw std::bad_alloc();
        }
        ~buffer() { std::free(p); }
    };
    thread_local const buffer b;
    return b.p;
}

void own_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gemm_view a, gemm_view b, float* c,
              std::int64_t ldc, bool accumulate, const float* bias, gemm_heads heads) {
    float* panel = panel_buffer();
    // Rows in runs that share C's row stride: all of C, or a sequence's tokens in a head.
    const std::int64_t row_stride = heads.seq > 0 ? heads.d : ldc;
    auto run_end = [&](std::int64_t i) { // the end of row i's run
        return heads.seq > 0
                   ? std::min(m, ((heads.row0 + i) / heads.seq + 1) * heads.seq - heads.row0)
                   : m;
    };
    auto c_at = [&](std::int64_t i, std::int64_t j) { // C's element (i, j)
        if (heads.seq == 0)
            return c + i * ldc + j;
        const std::int64_t r = heads.row0 + i;
        const std::int64_t head = (r / heads.seq) * (n / heads.d) + j / heads.d;
        return c + (head * heads.seq + r % heads.seq) * heads.d + j % heads.d;
    };
    // A by columns (Aᵀ stored: dW = dyᵀ·x) reads 6 floats of a line per step of k, a line per
    // step: with k in blocks of 2048 a row block's lines outgrew L2 beside the panel (mlp_up's
    // backward in the step at 2048 tokens took 208-216 ms against 171-177 with blocks of 512).
    const std::int64_t block = a.rs == 1 ? k_block_columns : k_block;
    for (std::int64_t k0 = 0; k0 < k; k0 += block) {
        const std::int64_t kc = std::min(block, k - k0);
        for (std::int64_t j0 = 0; j0 < n; j0 += k_cols) {
            const std::int64_t cols = std::min(k_cols, n - j0);
            const int nv = static_cast<int>((cols + 15) / 16);
            const int last = static_cast<int>(cols - 16 * (nv - 1));
            const auto tail = static_cast<__mmask16>(last == 16 ? 0xFFFF : (1u << last) - 1);
            // The panel contiguous (its columns past n zero), just before every row block of
            // A streams past it: it stays in L2, where read in place its rows would fall on a
            // few L1 sets, and a whole packed B would sit in L3.
            if (b.cs == 1)
                pack_panels(b.p + k0 * b.rs + j0, kc, cols, b.rs, panel);
            else
                pack_transposed(b.p + j0 * b.cs + k0, cols, kc, panel, b.cs);
            for (std::int64_t r0 = 0, r1 = run_end(0); r0 < m; r0 = r1, r1 = run_end(r1))
                for (std::int64_t i0 = r0; i0 < r1; i0 += tile::k_mr) {
                    const int mr = static_cast<int>(std::min<std::int64_t>(tile::k_mr, r1 - i0));
                    const tile::tile_args t{kc,
                                            a.p + i0 * a.rs + k0 * a.cs,
                                            a.rs,
                                            a.cs,
                                            panel,
                                            k_cols,
                                            c_at(i0, j0),
                                            row_stride,
                                            1.0f,
                                            accumulate || k0 > 0,
                                            tail,
                                            nullptr,
                                            bias && k0 == 0 ? bias + j0 : nullptr};
                    tile::micro_of(mr, nv)(t);
                }
        }
    }
}

#endif

} // namespace

gemm_impl linear_gemm_impl() {
    static const gemm_impl impl = choose_impl();
    return impl;
}

const char* gemm_impl_name(gemm_impl impl) {
    return impl == gemm_impl::own ? "own" : "openblas";
}

bool gemm_heads_fused(std::int64_t d, gemm_impl impl) {
    return impl == gemm_impl::own && tile_gemm_avx512() && d > 0 && d % 64 == 0;
}

void linear_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gemm_view a, gemm_view b, float* c,
                 std::int64_t ldc, bool accumulate, const float* bias, gemm_impl impl,
                 gemm_heads heads) {
    if (heads.seq != 0)
        RINGSCALE_REQUIRE(gemm_heads_fused(heads.d, impl) && heads.seq > 0 && heads.row0 >= 0 &&
                              n % heads.d == 0 && k > 0,
                          "linear_gemm: C as heads needs the own GEMM, k > 0, 64 | d and d | n");
    if (m <= 0 || n <= 0)
        return;
#ifdef RINGSCALE_HAVE_AVX512_TILES
    if (impl == gemm_impl::own && k > 0 && tile_gemm_avx512())
        return own_gemm(m, n, k, a, b, c, ldc, accumulate, bias, heads);
#else
    (void)impl;
#endif
    blas_gemm(m, n, k, a, b, c, ldc, accumulate, bias);
}

} // namespace ringscale::kernels::cpu
