// make_device: the compute backend by name, as comm::make_world picks a communicator. Always
// built; the CUDA device comes from cuda_device.cpp, or cuda_device_stub.cpp without CUDA.
#include "kernels/device.hpp"
#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::kernels {

std::unique_ptr<device> make_cuda_device();

std::unique_ptr<device> make_device(const std::string& name) {
    if (name == "cpu")
        return make_cpu_device();
    if (name == "cuda")
        return make_cuda_device();
    throw config_error(fmt::format("--device: '{}' is not cpu or cuda", name));
}

} // namespace ringscale::kernels
