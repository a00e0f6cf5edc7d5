// Linked when CUDA is not built: the CUDA training backend fails with a clear "not compiled".
#include "kernels/train_ops.hpp"
#include "src/base/error.hpp"

namespace ringscale::kernels {

std::unique_ptr<train_ops> make_cuda_train_ops(device&, bool) {
    throw not_compiled_error("train_step --device cuda: the CUDA backend is not compiled into "
                             "this ringscale (rebuild where nvcc is found); use --device cpu");
}

} // namespace ringscale::kernels
