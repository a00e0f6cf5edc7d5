// Linked when CUDA is not built: there is no GPU to describe.
#include "kernels/cuda/gpu_info.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::kernels::cuda {

gpu_info current_gpu_info() {
    throw not_compiled_error(
        "GPU information: the CUDA backend is not compiled into this ringscale");
}

std::uint64_t device_free_bytes() {
    throw not_compiled_error("device memory: the CUDA backend is not compiled into this ringscale");
}

} // namespace ringscale::kernels::cuda
