// make_train_ops: the training backend for a device, as make_device picks the device. Always
// built; the CUDA backend comes from train_ops_cuda.cpp, or train_ops_stub.cpp without CUDA.
#include "kernels/train_ops.hpp"
#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::kernels {

std::unique_ptr<train_ops> make_train_ops(device& dev, bool allow_tf32) {
    if (dev.name() == "cpu") {
        if (allow_tf32)
            throw config_error("--tf32 on needs --device cuda (TF32 is a GPU tensor-core mode; "
                               "the CPU kernels compute in fp32)");
        return make_cpu_train_ops(dev);
    }
    if (dev.name() == "cuda")
        return make_cuda_train_ops(dev, allow_tf32);
    throw config_error(fmt::format("train_step: no training backend for device '{}'", dev.name()));
}

} // namespace ringscale::kernels
