// Linked when CUDA is not built: the cuBLAS context and the cross-entropy and dense host
// wrappers, each throwing not_compiled_error, so code calling them links and fails clearly.
#include "kernels/cuda/cross_entropy.cuh"
#include "kernels/cuda/cublas_context.hpp"
#include "kernels/cuda/dense.cuh"

#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
    throw not_compiled_error(std::string(what) +
                             ": the CUDA backend is not compiled into this ringscale");
}
} // namespace

void throw_cublas_error(int status, const char* call, const char* file, int line) {
    throw_call_error(error_kind::cuda, call, "cuBLAS status " + std::to_string(status), file, line);
}

cublas_context::cublas_context(void*, bool) {
    not_compiled("cublas_context");
}
cublas_context::~cublas_context() = default;
cublas_context::cublas_context(cublas_context&&) noexcept {}
cublas_context& cublas_context::operator=(cublas_context&&) noexcept {
    return *this;
}

void cross_entropy_fwd_cuda(std::size_t, std::size_t, std::size_t, const float*,
                            const std::int32_t*, float*, double*, void*) {
    not_compiled("cross_entropy_fwd_cuda");
}
void cross_entropy_bwd_cuda(std::size_t, std::size_t, std::size_t, const float*,
                            const std::int32_t*, float*, float, void*) {
    not_compiled("cross_entropy_bwd_cuda");
}
void cross_entropy_fwd_bwd_cuda(std::size_t, std::size_t, std::size_t, const float*,
                                const std::int32_t*, float*, double*, float*, void*) {
    not_compiled("cross_entropy_fwd_bwd_cuda");
}

void linear_fwd_cuda(cublas_context&, const linear_shape&, const float*, const float*, const float*,
                     float*) {
    not_compiled("linear_fwd_cuda");
}
void linear_bwd_cuda(cublas_context&, const linear_shape&, const float*, const float*, const float*,
                     float*, float*, float*) {
    not_compiled("linear_bwd_cuda");
}

} // namespace ringscale::kernels::cuda
