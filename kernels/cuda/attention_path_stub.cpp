// Linked when CUDA is not built: there is no device to resolve an attention path for.
#include "kernels/cuda/attention_path.hpp"

#include "src/base/error.hpp"

namespace ringscale::kernels::cuda {

attn_path resolve_attention_path(int) {
    throw not_compiled_error(
        "attention path: the CUDA backend is not compiled into this ringscale");
}

} // namespace ringscale::kernels::cuda
