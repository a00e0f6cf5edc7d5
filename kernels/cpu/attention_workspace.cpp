// The CPU attention kernels' cold parts (kernels/cpu/attention_cpu.hpp): sizing the
// workspace and checking a shape, once per call at most; the hot loops stay in
// attention_cpu.cpp.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/attention_gemm.hpp"
#include "kernels/threads.hpp"
#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels::cpu {

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

} // namespace ringscale::kernels::cpu
