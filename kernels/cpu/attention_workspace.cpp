// The CPU attention kernels' cold parts (kernels/cpu/attention_cpu.hpp): sizing the
// workspace and checking a shape, once per call at most, and the backward's delta (one dot
// product a row); the tiled loops stay in attention_cpu.cpp.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/cpu/vec_math.hpp"
#include "kernels/threads.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ringscale::kernels::cpu {

namespace {

/// sum_d a[d] * b[d] in fp32 as the CUDA delta kernel (attention_bwd_delta.cu) adds it: lane l
/// of 32 takes d = l, l + 32, ... by fused multiply-add, then xor-shuffles of 16, 8, 4, 2, 1.
float warp_dot(const float* a, const float* b, std::int64_t n) {
    float lane[32];
    for (int l = 0; l < 32; ++l) {
        float sum = 0.0f;
        for (std::int64_t d = l; d < n; d += 32)
            sum = std::fma(a[d], b[d], sum);
        lane[l] = sum;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        float next[32];
        for (int l = 0; l < 32; ++l)
            next[l] = lane[l] + lane[l ^ offset];
        std::copy(next, next + 32, lane);
    }
    return lane[0];
}

/// delta's rows in fp32 from double sums: 8 lanes (d mod 8) added pairwise at the end, compiled
/// per ISA; one chain of dependent adds (64 at a latency each) took 0.5 ms a call at
/// 4 x 8 x 256 rows, 3% of the backward's attention.
RINGSCALE_VEC_CLONES void delta_rows(std::int64_t rows, std::int64_t dim, const float* o,
                                     const float* d_o, float* delta) {
    constexpr std::int64_t lanes = 8;
    for (std::int64_t r = 0; r < rows; ++r, o += dim, d_o += dim) {
        double lane[lanes] = {};
        std::int64_t d = 0;
        for (; d + lanes <= dim; d += lanes)
            for (std::int64_t l = 0; l < lanes; ++l)
                lane[l] += static_cast<double>(o[d + l]) * d_o[d + l];
        for (std::int64_t l = 0; d < dim; ++d, ++l)
            lane[l] += static_cast<double>(o[d]) * d_o[d];
        delta[r] = static_cast<float>(((lane[0] + lane[1]) + (lane[2] + lane[3])) +
                                      ((lane[4] + lane[5]) + (lane[6] + lane[7])));
    }
}

} // namespace

void attention_workspace_reserve(attention_workspace& ws, attention_tiles tiles, int workers) {
    if (tiles.q_tile < 16 || tiles.k_tile < 16)
        throw config_error(
            "attention tiles must be >= 16 rows, got q_tile=" + std::to_string(tiles.q_tile) +
            " k_tile=" + std::to_string(tiles.k_tile));
    ws.m_tiles = tiles;
    ws.m_workers = workers > 0 ? workers : blas_threads();
    const auto tile = static_cast<std::size_t>(tiles.q_tile * tiles.k_tile * ws.m_workers);
    const auto rows = static_cast<std::size_t>(2 * tiles.q_tile * ws.m_workers);
    if (ws.m_scores.size() < tile)
        ws.m_scores.assign(tile, 0.0f);
    if (ws.m_dp.size() < tile)
        ws.m_dp.assign(tile, 0.0f);
    if (ws.m_rows.size() < rows)
        ws.m_rows.assign(rows, 0.0f);
    const auto pack = static_cast<std::size_t>(2 * packed_size(tiles.k_tile, 128) * ws.m_workers);
    if (tile_gemm_avx512() && ws.m_pack.size() < pack)
        ws.m_pack.assign(pack, 0.0f);
}

void check_attention_cpu_shape(const attention_shape& shape) {
    check_attention_shape(shape);
    if (shape.head_dim != 64 && shape.head_dim != 128)
        throw config_error("CPU attention supports head_dim 64 or 128, got " +
                           std::to_string(shape.head_dim));
}

void attention_bwd_delta(const attention_shape& s, const float* o, const float* d_o, float* delta,
                         elem round) {
    const std::int64_t rows = s.batch * s.heads * s.q_len;
    if (round != elem::f32) {
        for (std::int64_t r = 0; r < rows; ++r)
            delta[r] = warp_dot(o + r * s.head_dim, d_o + r * s.head_dim, s.head_dim);
        return;
    }
    delta_rows(rows, s.head_dim, o, d_o, delta);
}

} // namespace ringscale::kernels::cpu
