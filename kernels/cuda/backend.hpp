// The CUDA backend's entry points: every kernel of kernels/kernels.inc on the executor's
// compute stream (kernels/cuda/backend*.cpp), and the CUDA executor. Free of CUDA types. Where
// CUDA is not built, kernels/device_hooks/cuda_hooks.cpp defines the same functions, each
// throwing not_compiled_error. Called by kernels/dispatch.cpp only.
#pragma once

#include "kernels/kernels.hpp"

#include <memory>

namespace ringscale::kernels::cuda {

#define RINGSCALE_KERNEL(ret, name, params, args) ret name params;
#include "kernels/kernels.inc"
#undef RINGSCALE_KERNEL

/// The CUDA executor on the current device: config_error when no device is visible.
std::unique_ptr<executor> make_executor();

} // namespace ringscale::kernels::cuda
