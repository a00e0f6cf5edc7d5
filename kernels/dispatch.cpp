// The one place a kernel's backend is chosen: each kernel of kernels/kernels.inc switches on
// the executor's kind and calls the CPU (kernels/cpu) or the CUDA (kernels/cuda, or the
// not-compiled hooks) implementation with the same arguments. One switch per call, no
// per-element work.
#include "kernels/cpu/backend.hpp"
#include "kernels/cuda/backend.hpp"
#include "kernels/kernels.hpp"

namespace ringscale::kernels {

#define RINGSCALE_KERNEL(ret, name, params, args)                                                  \
    ret name params {                                                                              \
        switch (exec.kind()) {                                                                     \
        case device_kind::cuda:                                                                    \
            return cuda::name args;                                                                \
        case device_kind::cpu:                                                                     \
            break;                                                                                 \
        }                                                                                          \
        return cpu::name args;                                                                     \
    }
#include "kernels/kernels.inc"
#undef RINGSCALE_KERNEL

std::unique_ptr<executor> make_executor(device_kind kind) {
    switch (kind) {
    case device_kind::cuda:
        return cuda::make_executor();
    case device_kind::cpu:
        break;
    }
    return cpu::make_executor();
}

void require_compiled(device_kind kind) {
    if (kind == device_kind::cuda && !cuda_compiled())
        cuda::make_executor(); // the not-compiled hooks' error
}

} // namespace ringscale::kernels
