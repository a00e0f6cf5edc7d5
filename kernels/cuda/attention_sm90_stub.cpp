// Linked when CUDA is not built: the sm90 attention kernels' host wrappers, throwing
// not_compiled_error like attention_stub.cpp.
#include "kernels/cuda/attention_sm90.cuh"

#include "src/base/error.hpp"

namespace ringscale::kernels::cuda {

bool sm90_overlap() {
    return true;
}

bool attention_fwd_sm90_supports(const attention_shape&) {
    return false;
}

void attention_fwd_sm90(const attention_shape&, attn_dtype, const void*, const void*, const void*,
                        const attention_positions&, float*, float*, void*) {
    throw not_compiled_error("attention_fwd_sm90: the CUDA backend is not compiled into this "
                             "ringscale");
}

} // namespace ringscale::kernels::cuda
