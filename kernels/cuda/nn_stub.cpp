// Linked when CUDA is not built: the cross-entropy host wrappers, each throwing
// not_compiled_error, so code calling them links and fails clearly.
#include "kernels/cuda/cross_entropy.cuh"

#include "src/error.hpp"

#include <string>

namespace ringscale::kernels::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
    throw not_compiled_error(std::string(what) +
                             ": the CUDA backend is not compiled into this ringscale");
}
} // namespace

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

} // namespace ringscale::kernels::cuda
