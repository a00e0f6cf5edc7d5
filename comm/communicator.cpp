#include "comm/communicator.hpp"

#include "comm/mpi_communicator.hpp"
#include "src/base/error.hpp"

namespace ringscale::comm {

// The backends beyond host MPI exist where CMake found them (comm/CMakeLists.txt); this file is
// the one place that knows which, and the one that says "not compiled" for the others.
#ifdef RINGSCALE_COMM_NCCL
std::unique_ptr<communicator> make_nccl_world(); // nccl_communicator.cpp
constexpr bool nccl_compiled = true;
#else
constexpr bool nccl_compiled = false;
std::string nccl_version() {
    return "";
}
#endif
#ifdef RINGSCALE_COMM_STAGED
std::unique_ptr<communicator> make_mpi_staged_world(); // mpi_staged_communicator.cpp
#endif

namespace {

std::unique_ptr<communicator> nccl_world() {
#ifdef RINGSCALE_COMM_NCCL
    return make_nccl_world();
#else
    throw not_compiled_error("--comm nccl: the NCCL backend is not compiled into this ringscale");
#endif
}

std::unique_ptr<communicator> staged_world() {
#ifdef RINGSCALE_COMM_STAGED
    return make_mpi_staged_world();
#else
    throw not_compiled_error("--comm mpi with --device cuda: device-staged MPI needs the CUDA "
                             "backend, which is not compiled into this ringscale");
#endif
}

} // namespace

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

bool backend_compiled(comm_kind backend) {
    return backend == comm_kind::mpi || nccl_compiled;
}

void require_compiled(comm_kind backend) {
    if (backend == comm_kind::nccl && !nccl_compiled)
        nccl_world(); // the not-compiled error
}

std::unique_ptr<communicator> make_world(comm_kind backend, memory_space memory) {
    if (backend == comm_kind::nccl)
        return nccl_world();
    if (memory == memory_space::device) // staged through pinned host memory
        return staged_world();
    return std::make_unique<mpi_communicator>(MPI_COMM_WORLD);
}

} // namespace ringscale::comm
