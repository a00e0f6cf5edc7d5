#include "kernels/cpu/linear.hpp"

#include "kernels/cpu/layout_bhsd.hpp"
#include "kernels/cpu/linear_gemm.hpp"
#include "kernels/cpu/vec_math.hpp"
#include "kernels/parallel.hpp"
#include "kernels/threads.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace ringscale::kernels::cpu {

namespace {

// db[o] += Σ_t dy[t, o] for columns [begin, end): over thousands of tokens, accumulated in
// double (a block of columns at a time, on the stack; 8 lanes wide on AVX-512) and added once.
RINGSCALE_VEC_CLONES void bias_grad_cols(const linear_shape& s, const float* dy, std::size_t begin,
                                         std::size_t end, float* db) {
    constexpr std::size_t block = 64;
    for (std::size_t o0 = begin; o0 < end; o0 += block) {
        const std::size_t width = std::min(block, end - o0);
        std::array<double, block> sum{};
        for (std::size_t t = 0; t < s.tokens; ++t) {
            const float* row = dy + t * s.out + o0;
            for (std::size_t o = 0; o < width; ++o)
                sum[o] += row[o];
        }
        for (std::size_t o = 0; o < width; ++o)
            db[o0 + o] += static_cast<float>(sum[o]);
    }
}

// Rows per chunk: token rows for y and dx, output rows for dW; one chunk per thread. Each
// chunk's GEMM packs the shared operand again, and OpenBLAS's packing and edges cost more on
// small calls: at 1024 tokens (hidden 512 and 2048, SkylakeX kernels) whole calls ran at
// 145-152 GFLOP/s a core, chunks of 256 token rows at 137-143 and dW in chunks of 128 output
// rows at 123-125 (tests/bench/README.md). At least 32 rows.
std::size_t rows_grain(std::size_t rows, int threads) {
    const auto t = static_cast<std::size_t>(std::max(1, threads));
    return std::max<std::size_t>(32, (rows + t - 1) / t);
}

/// linear_bwd, dx written as heads (gemm_heads: seq, d) when dx_heads.seq > 0.
void backward(const linear_shape& s, const float* x, const float* w, const float* dy, float* dx,
              float* dw, float* db, gemm_heads dx_heads) {
    linear_check(s);
    const auto tokens = static_cast<std::int64_t>(s.tokens);
    const auto in = static_cast<std::int64_t>(s.in), out = static_cast<std::int64_t>(s.out);
    const serial_blas budget;
    if (dx) // dx[tokens, in] = dy[tokens, out]·W[out, in], by token rows
        parallel_for(
            s.tokens, rows_grain(s.tokens, budget.threads()),
            [&](std::size_t t0, std::size_t t1) {
                const bool heads = dx_heads.seq > 0;
                linear_gemm(
                    static_cast<std::int64_t>(t1 - t0), in, out, {dy + t0 * s.out, out, 1},
                    {w, in, 1}, heads ? dx : dx + t0 * s.in, heads ? 0 : in, false, nullptr,
                    linear_gemm_impl(),
                    heads ? gemm_heads{dx_heads.seq, dx_heads.d, static_cast<std::int64_t>(t0)}
                          : gemm_heads{});
            },
            budget.threads());
    // dw[out, in] += dy[tokens, out]ᵀ·x[tokens, in] and db[out] += Σ dy, by output rows.
    parallel_for(
        s.out, rows_grain(s.out, budget.threads()),
        [&](std::size_t o0, std::size_t o1) {
            linear_gemm(static_cast<std::int64_t>(o1 - o0), in, tokens, {dy + o0, 1, out},
                        {x, in, 1}, dw + o0 * s.in, in, true);
            if (db)
                bias_grad_cols(s, dy, o0, o1, db);
        },
        budget.threads());
}

/// Checks linear_fwd_heads's and linear_bwd_heads's layout: whole sequences, whole groups.
void check_heads(const linear_shape& s, std::size_t cols, std::size_t seq, std::size_t heads,
                 std::size_t d, const char* who) {
    RINGSCALE_REQUIRE(
        seq > 0 && heads > 0 && d > 0 && s.tokens % seq == 0 && cols % (heads * d) == 0,
        std::string(who) + ": tokens must be whole sequences and the columns whole groups of "
                           "heads x d");
}

/// The fallback's move: groups of heads·d columns of token-major src [tokens, cols] to BHSD
/// [tokens / seq, heads, seq, d] at dst[g].
void to_heads(const linear_shape& s, std::size_t cols, std::size_t seq, std::size_t heads,
              std::size_t d, const float* src, float* const* dst) {
    const auto i64 = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    for (std::size_t g = 0; g < cols / (heads * d); ++g)
        copy_bhsd(true, {i64(s.tokens / seq), i64(seq)}, i64(heads), i64(d), src, i64(cols),
                  i64(g * heads * d), dst[g]);
}

} // namespace

void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b, float* y) {
    linear_check(s);
    const auto n = static_cast<std::int64_t>(s.out), k = static_cast<std::int64_t>(s.in);
    const serial_blas budget;
    // Token rows split over the rank's threads, each a single-threaded GEMM on its rows.
    parallel_for(
        s.tokens, rows_grain(s.tokens, budget.threads()),
        [&](std::size_t t0, std::size_t t1) {
            linear_gemm(static_cast<std::int64_t>(t1 - t0), n, k, {x + t0 * s.in, k, 1}, {w, 1, k},
                        y + t0 * s.out, n, false, b);
        },
        budget.threads());
}

void linear_fwd_heads(const linear_shape& s, const float* x, const float* w, const float* b,
                      std::size_t seq, std::size_t heads, std::size_t d, float* const* dst,
                      float* scratch) {
    linear_check(s);
    check_heads(s, s.out, seq, heads, d, "linear_fwd_heads");
    const std::size_t group = heads * d, groups = s.out / group;
    const auto sd = static_cast<std::int64_t>(d);
    if (!gemm_heads_fused(sd)) { // y token-major first, then moved
        RINGSCALE_REQUIRE(scratch, "linear_fwd_heads: needs scratch where the GEMM cannot write "
                                   "heads");
        linear_fwd(s, x, w, b, scratch);
        return to_heads(s, s.out, seq, heads, d, scratch, dst);
    }
    const auto n = static_cast<std::int64_t>(group), k = static_cast<std::int64_t>(s.in);
    const serial_blas budget;
    // Token rows split over the threads as linear_fwd splits them; each block writes its rows
    // of every group, packing each group's Wᵀ once.
    parallel_for(
        s.tokens, rows_grain(s.tokens, budget.threads()),
        [&](std::size_t t0, std::size_t t1) {
            for (std::size_t g = 0; g < groups; ++g)
                linear_gemm(static_cast<std::int64_t>(t1 - t0), n, k, {x + t0 * s.in, k, 1},
                            {w + g * group * s.in, 1, k}, dst[g], 0, false,
                            b ? b + g * group : nullptr, linear_gemm_impl(),
                            {static_cast<std::int64_t>(seq), sd, static_cast<std::int64_t>(t0)});
        },
        budget.threads());
}

void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy, float* dx,
                float* dw, float* db) {
    backward(s, x, w, dy, dx, dw, db, {});
}

void linear_bwd_heads(const linear_shape& s, const float* x, const float* w, const float* dy,
                      std::size_t seq, std::size_t heads, std::size_t d, float* dx, float* dw,
                      float* db, float* scratch) {
    linear_check(s);
    check_heads(s, s.in, seq, heads, d, "linear_bwd_heads");
    RINGSCALE_REQUIRE(s.in == heads * d, "linear_bwd_heads: in must be heads x d");
    RINGSCALE_REQUIRE(dx, "linear_bwd_heads: dx must not be null");
    const auto sd = static_cast<std::int64_t>(d);
    if (gemm_heads_fused(sd))
        return backward(s, x, w, dy, dx, dw, db, {static_cast<std::int64_t>(seq), sd, 0});
    RINGSCALE_REQUIRE(scratch, "linear_bwd_heads: needs scratch where the GEMM cannot write heads");
    backward(s, x, w, dy, scratch, dw, db, {});
    float* const dst[1] = {dx};
    to_heads(s, s.in, seq, heads, d, scratch, dst);
}

} // namespace ringscale::kernels::cpu
