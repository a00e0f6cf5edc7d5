// Linked when CUDA is not built: --device cuda fails with a clear "not compiled" error.
#include "kernels/device.hpp"
#include "src/base/error.hpp"

namespace ringscale::kernels {

bool cuda_compiled() {
    return false;
}

std::unique_ptr<device> make_cuda_device() {
    throw not_compiled_error("--device cuda: the CUDA backend is not compiled into this "
                             "ringscale (rebuild where nvcc is found); use --device cpu");
}

} // namespace ringscale::kernels
