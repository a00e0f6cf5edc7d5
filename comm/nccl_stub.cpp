// Linked when the NCCL backend is not built: --comm nccl fails with a clear message.
#include "comm/communicator.hpp"
#include "src/base/error.hpp"

namespace ringscale::comm {

extern const bool nccl_compiled = false;

std::string nccl_version() {
    return "";
}

std::unique_ptr<communicator> make_nccl_world() {
    throw not_compiled_error("--comm nccl: the NCCL backend is not compiled into this ringscale");
}

} // namespace ringscale::comm
