// Host side of the Hopper TMA loads: a CUtensorMap (the 128-byte descriptor a
// cp.async.bulk.tensor instruction reads) for a row-major bf16/fp16 tensor in device memory,
// encoded by the driver's cuTensorMapEncodeTiled. The driver entry point is looked up at run
// time through the CUDA runtime (cudaGetDriverEntryPointByVersion), so ringscale does not
// link libcuda. Names CUtensorMap (from <cuda.h>, a type only): include it from CUDA sources.
// Not yet run on a GPU.
#pragma once

#include "kernels/cuda/attention_fwd.cuh" // attn_dtype

#include <cstdint>
#include <cuda.h>

namespace ringscale::kernels::cuda {

/// A tiled view of a row-major tensor of 2-byte elements: dims[0] is the innermost
/// (contiguous) extent, dims[r] the r-th outer one; strides_bytes[r - 1] is the distance in
/// bytes between consecutive indices of dim r (a multiple of 16). box is the tile one load
/// brings into shared memory, box[0] * 2 <= 128 bytes under the 128-byte swizzle.
struct tma_tensor {
    const void* base = nullptr; ///< DEVICE address, 16-byte aligned
    int rank = 3;               ///< 1..5
    std::uint64_t dims[5] = {};
    std::uint64_t strides_bytes[4] = {};
    std::uint32_t box[5] = {};
};

/// Encode a tensor map for `t` with 128-byte swizzle, zero fill out of bounds, no
/// interleave, 256-byte L2 promotion. Throws config_error, before asking the driver, for a
/// rank, extent (1..2^32), stride (multiple of 16 below 2^40), box (1..256; innermost 16..128
/// bytes, a multiple of 16) or alignment TMA does not accept; a cuda error when the driver
/// entry point cannot be found or refuses.
CUtensorMap make_tma_desc(attn_dtype dtype, const tma_tensor& t);

/// Tensor map of a [outer][rows][cols] row-major tensor (cols contiguous), loading boxes of
/// box_rows x box_cols elements of one outer index (box_cols * 2 <= 128).
CUtensorMap make_tma_desc_3d(attn_dtype dtype, const void* base, std::uint64_t outer,
                             std::uint64_t rows, std::uint64_t cols, std::uint32_t box_rows,
                             std::uint32_t box_cols);

} // namespace ringscale::kernels::cuda
