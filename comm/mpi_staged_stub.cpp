// Linked when CUDA is not built: --comm mpi with --device cuda fails with a clear message.
#include "comm/communicator.hpp"
#include "src/base/error.hpp"

namespace ringscale::comm {

std::unique_ptr<communicator> make_mpi_staged_world() {
    throw not_compiled_error("--comm mpi with --device cuda: device-staged MPI needs the CUDA "
                             "backend, which is not compiled into this ringscale");
}

} // namespace ringscale::comm
