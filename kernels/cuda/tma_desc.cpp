#include "kernels/cuda/tma_desc.hpp"

#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>
#include <string>

namespace ringscale::kernels::cuda {

namespace {

/// cuTensorMapEncodeTiled from the driver, looked up once per process.
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
    static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void* ptr = nullptr;
        cudaDriverEntryPointQueryResult found{};
        RINGSCALE_CUDA_CALL(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000,
                                                             cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || ptr == nullptr)
            throw config_error("TMA: the CUDA driver has no cuTensorMapEncodeTiled (needs a "
                               "driver for CUDA 12.0 or newer)");
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
    }();
    return fn;
}

void check_tensor(const tma_tensor& t) {
    RINGSCALE_REQUIRE(t.rank >= 1 && t.rank <= 5, "TMA: rank must be 1..5");
    RINGSCALE_REQUIRE(reinterpret_cast<std::uintptr_t>(t.base) % 16 == 0,
                      "TMA: the tensor base must be 16-byte aligned");
    // cuTensorMapEncodeTiled's rules (cuda.h), checked here for a one-line message.
    RINGSCALE_REQUIRE(t.box[0] >= 1 && t.box[0] * 2 <= 128 && t.box[0] * 2 % 16 == 0,
                      "TMA: the innermost box must span 16..128 bytes, a multiple of 16, under "
                      "the 128-byte swizzle");
    for (int r = 0; r < t.rank; ++r) {
        RINGSCALE_REQUIRE(t.box[r] >= 1 && t.box[r] <= 256, "TMA: box extents must be 1..256");
        RINGSCALE_REQUIRE(t.dims[r] >= 1 && t.dims[r] <= (std::uint64_t{1} << 32),
                          "TMA: tensor extents must be 1..2^32");
    }
    for (int r = 0; r + 1 < t.rank; ++r)
        RINGSCALE_REQUIRE(t.strides_bytes[r] % 16 == 0 &&
                              t.strides_bytes[r] < (std::uint64_t{1} << 40),
                          "TMA: tensor strides must be multiples of 16 bytes below 2^40");
}

} // namespace

CUtensorMap make_tma_desc(attn_dtype dtype, const tma_tensor& t) {
    check_tensor(t);
    CUtensorMap map{};
    cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
    const CUresult rc = encode_tiled()(
        &map,
        dtype == attn_dtype::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                  : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        static_cast<cuuint32_t>(t.rank), const_cast<void*>(t.base), t.dims, t.strides_bytes, t.box,
        elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (rc != CUDA_SUCCESS)
        throw config_error("TMA: cuTensorMapEncodeTiled failed with CUresult " +
                           std::to_string(static_cast<int>(rc)));
    return map;
}

CUtensorMap make_tma_desc_3d(attn_dtype dtype, const void* base, std::uint64_t outer,
                             std::uint64_t rows, std::uint64_t cols, std::uint32_t box_rows,
                             std::uint32_t box_cols) {
    tma_tensor t;
    t.base = base;
    t.rank = 3;
    t.dims[0] = cols;
    t.dims[1] = rows;
    t.dims[2] = outer;
    t.strides_bytes[0] = cols * 2;
    t.strides_bytes[1] = rows * cols * 2;
    t.box[0] = box_cols;
    t.box[1] = box_rows;
    t.box[2] = 1;
    return make_tma_desc(dtype, t);
}

} // namespace ringscale::kernels::cuda
