// The CPU backend's entry points: every kernel of kernels/kernels.inc, implemented with the
// fast CPU kernels of this folder on host memory (kernels/cpu/backend*.cpp), and the CPU
// executor. Called by kernels/dispatch.cpp only.
#pragma once

#include "kernels/kernels.hpp"

#include <memory>

namespace ringscale::kernels::cpu {

#define RINGSCALE_KERNEL(ret, name, params, args) ret name params;
#include "kernels/kernels.inc"
#undef RINGSCALE_KERNEL

/// The CPU executor: tracked host memory, every call synchronous, phases on the host clock.
std::unique_ptr<executor> make_executor();

} // namespace ringscale::kernels::cpu
