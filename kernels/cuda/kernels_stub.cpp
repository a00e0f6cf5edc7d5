// Linked when CUDA is not built: the CUDA kernels' host wrappers, each throwing
// not_compiled_error, so code calling them links and fails with a clear message.
#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/softmax_merge.cuh"

#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
    throw not_compiled_error(std::string(what) +
                             ": the CUDA backend is not compiled into this ringscale");
}
} // namespace

void softmax_merge_cuda(const float*, const float*, const float*, const float*, std::int64_t,
                        std::int64_t, float*, float*, void*) {
    not_compiled("softmax_merge_cuda");
}
void rmsnorm_fwd_cuda(std::size_t, std::size_t, float, const float*, const float*, float*, float*,
                      void*) {
    not_compiled("rmsnorm_fwd_cuda");
}
void rmsnorm_bwd_cuda(std::size_t, std::size_t, const float*, const float*, const float*,
                      const float*, float*, float*, void*) {
    not_compiled("rmsnorm_bwd_cuda");
}
void gelu_fwd_cuda(std::size_t, const float*, float*, void*) {
    not_compiled("gelu_fwd_cuda");
}
void gelu_bwd_cuda(std::size_t, const float*, const float*, float*, void*) {
    not_compiled("gelu_bwd_cuda");
}
void adamw_step_cuda(const adamw_params&, std::int64_t, std::size_t, float*, const float*, float*,
                     float*, void*) {
    not_compiled("adamw_step_cuda");
}

} // namespace ringscale::kernels::cuda
