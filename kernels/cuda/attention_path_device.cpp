// resolve_attention_path for a CUDA device: its compute capability from the runtime.
#include "kernels/attention_path.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels {

attn_path resolve_attention_path(int device) {
    int major = 0, minor = 0;
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return resolve_attention_path(attention_path(), sm90_compiled(), cudnn_compiled(), major,
                                  minor);
}

} // namespace ringscale::kernels
