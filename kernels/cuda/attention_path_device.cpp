// resolve_attention_path for a CUDA device: its compute capability from the runtime.
#include "kernels/cuda/attention_path.hpp"
#include "kernels/cuda/cuda_check.hpp"

#include <cuda_runtime.h>

namespace ringscale::kernels::cuda {

attn_path resolve_attention_path(int device) {
    int major = 0, minor = 0;
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return resolve_attention_path(attention_path(), sm90_compiled(), major, minor);
}

} // namespace ringscale::kernels::cuda
