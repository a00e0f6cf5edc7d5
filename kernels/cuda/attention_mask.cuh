// Device pieces of the sm80 attention kernels under a mask beyond causal (attention_fwd.cu,
// attention_bwd.cu, their `masked` instantiations): the host check of a launch. The tile
// logic itself (the rows a block walks, a warp tile's decision, the per-element pass over a
// forward warp tile's scores) is kernels/mask_tiles.hpp (host and device, unit-tested on the
// CPU). Names CUDA types: include it from .cu files only.
#pragma once

#include "kernels/cuda/attention_device.cuh"
#include "kernels/mask_tiles.hpp"

#include "src/base/error.hpp"

#include <cstdint>
#include <string>

namespace ringscale::kernels::cuda::attn {

/// Host check before a masked launch: the mask's arrays must have their device copies
/// (kernels/dev_mask.hpp); the kernels never read the host pointers. Throws config_error
/// naming `who`.
inline void check_mask_launch(const char* who, const mask_view& m) {
    RINGSCALE_REQUIRE((m.docs == 0 || m.doc_start_dev) && (m.block == 0 || m.keep_dev),
                      std::string(who) + ": the mask's document starts and kept blocks must be "
                                         "in device memory (kernels::dev_mask)");
}

} // namespace ringscale::kernels::cuda::attn
