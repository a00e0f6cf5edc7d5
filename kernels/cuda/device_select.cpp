// make_device: the compute backend by name, as comm::make_world picks a communicator. Always
// built; the CUDA device comes from cuda_device.cpp, or cuda_device_stub.cpp without CUDA.
#include "kernels/device.hpp"

namespace ringscale::kernels {

std::unique_ptr<device> make_cuda_device();

std::unique_ptr<device> make_device(device_kind kind) {
    if (kind == device_kind::cuda)
        return make_cuda_device();
    return make_cpu_device();
}

} // namespace ringscale::kernels
