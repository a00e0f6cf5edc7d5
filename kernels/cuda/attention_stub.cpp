// Linked when CUDA is not built: the CUDA attention kernels' host wrappers, each throwing
// not_compiled_error, so code calling them links and fails with a clear message.
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/attention_fwd.cuh"

#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
    throw not_compiled_error(std::string(what) +
                             ": the CUDA backend is not compiled into this ringscale");
}
} // namespace

const char* to_string(attn_dtype dtype) {
    return dtype == attn_dtype::bf16 ? "bf16" : "fp16";
}
void to_attn_dtype_cuda(attn_dtype, std::size_t, const float*, void*, void*) {
    not_compiled("to_attn_dtype_cuda");
}
void from_attn_dtype_cuda(attn_dtype, std::size_t, const void*, float*, void*) {
    not_compiled("from_attn_dtype_cuda");
}
void attention_fwd_init_cuda(const attention_shape&, float*, float*, void*) {
    not_compiled("attention_fwd_init_cuda");
}
void attention_fwd_cuda(const attention_shape&, attn_dtype, const void*, const void*, const void*,
                        const attention_positions&, float*, float*, void*) {
    not_compiled("attention_fwd_cuda");
}
void attention_bwd_delta_cuda(const attention_shape&, attn_dtype, const float*, const void*, float*,
                              void*) {
    not_compiled("attention_bwd_delta_cuda");
}
void attention_bwd_cuda(const attention_shape&, attn_dtype, const void*, const void*, const void*,
                        const void*, const float*, const float*, const attention_positions&, float*,
                        float*, float*, void*) {
    not_compiled("attention_bwd_cuda");
}

} // namespace ringscale::kernels::cuda
