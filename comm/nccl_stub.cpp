// Linked when NCCL was not found at build time: --comm nccl fails with a clear message.
#include "comm/communicator.hpp"
#include "src/error.hpp"

namespace ringscale::comm {

extern const bool nccl_compiled = false;

std::unique_ptr<communicator> make_nccl_world() {
    throw not_compiled_error("--comm nccl: this ringscale was built without NCCL "
                             "(configure with CUDA and NCCL available)");
}

} // namespace ringscale::comm
