#include "comm/communicator.hpp"

#include "comm/mpi_communicator.hpp"
#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::comm {

// Defined in nccl_communicator.cpp or, when NCCL was not found, nccl_stub.cpp.
std::unique_ptr<communicator> make_nccl_world();
extern const bool nccl_compiled;
// Defined in mpi_staged_communicator.cpp or, when CUDA was not built, mpi_staged_stub.cpp.
std::unique_ptr<communicator> make_mpi_staged_world();

std::size_t size_of(dtype t) {
    switch (t) {
    case dtype::f32:
    case dtype::i32:
        return 4;
    case dtype::f64:
    case dtype::i64:
        return 8;
    case dtype::u8:
        return 1;
    case dtype::bf16:
    case dtype::f16:
        return 2;
    }
    return 1;
}

const char* to_string(dtype t) {
    switch (t) {
    case dtype::f32:
        return "float32";
    case dtype::f64:
        return "float64";
    case dtype::i32:
        return "int32";
    case dtype::i64:
        return "int64";
    case dtype::u8:
        return "uint8";
    case dtype::bf16:
        return "bfloat16";
    case dtype::f16:
        return "float16";
    }
    return "?";
}

void wait_all(std::vector<request_ptr>& reqs) {
    for (auto& r : reqs)
        if (r)
            r->wait();
    reqs.clear();
}

bool backend_compiled(const std::string& backend) {
    if (backend == "mpi")
        return true;
    if (backend == "nccl")
        return nccl_compiled;
    return false;
}

std::unique_ptr<communicator> make_world(const std::string& backend, memory_space memory) {
    if (backend == "mpi") {
        if (memory == memory_space::device) // staged through pinned host memory
            return make_mpi_staged_world();
        return std::make_unique<mpi_communicator>(MPI_COMM_WORLD);
    }
    if (backend == "nccl")
        return make_nccl_world();
    throw config_error(fmt::format("--comm: unknown backend '{}' (choose mpi or nccl)", backend));
}

} // namespace ringscale::comm
