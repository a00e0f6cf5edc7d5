// Linked when CUDA is not built: the sm90 attention backward's host wrappers (declared in
// attention_sm90.cuh), as attention_sm90_stub.cpp does for the forward.
#include "kernels/cuda/attention_sm90.cuh"

#include "src/base/error.hpp"

namespace ringscale::kernels::cuda {

bool attention_bwd_sm90_supports(const attention_shape&) {
    return false;
}

void attention_bwd_sm90(const attention_shape&, attn_dtype, const void*, const void*, const void*,
                        const void*, const float*, const float*, const attention_positions&, float*,
                        float*, float*, void*) {
    throw not_compiled_error("attention_bwd_sm90: the CUDA backend is not compiled into this "
                             "ringscale");
}

} // namespace ringscale::kernels::cuda
