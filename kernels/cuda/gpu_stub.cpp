// Linked when CUDA is not built: there is no GPU to describe.
#include "kernels/gpu.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::kernels {

int gpu_count() {
    return 0;
}

void bind_gpu(int, int) {
    throw not_compiled_error("--device cuda: the CUDA backend is not compiled into this ringscale");
}

gpu_info current_gpu_info() {
    throw not_compiled_error(
        "GPU information: the CUDA backend is not compiled into this ringscale");
}

std::uint64_t gpu_free_bytes() {
    throw not_compiled_error("device memory: the CUDA backend is not compiled into this ringscale");
}

} // namespace ringscale::kernels
