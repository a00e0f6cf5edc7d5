// A GPU launch inside an MPI test, made as the launcher makes one: each rank binds the GPU of
// its node-local rank, the job's communicator works on device memory (NCCL, or MPI staged
// through pinned host memory), the compute device is CUDA, and one planned case runs through
// the run loop. Shared by the MPI GPU tests of the jobs; every decision to skip is taken by
// all ranks alike, with its reason.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/executor.hpp"
#include "kernels/gpu.hpp"
#include "src/engine/device_binding.hpp"
#include "src/engine/run_loop.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>

namespace ringscale::testing_support {

struct gpu_launch {
    std::unique_ptr<comm::communicator> control; ///< host-memory MPI
    std::unique_ptr<comm::communicator> world;   ///< the job's: NCCL or staged MPI
    std::unique_ptr<kernels::executor> dev;
    device_binding binding;
    std::string skip_reason; ///< non-empty: the same on every rank; nothing else is set
};

/// Collective: bind, then make the device communicator `comm` ("mpi" | "nccl") and the CUDA
/// device, or say why this machine cannot (no GPU on some rank; NCCL with ranks sharing a GPU).
inline gpu_launch make_gpu_launch(const std::string& comm_name) {
    const comm_kind comm = parse_comm_kind(comm_name);
    gpu_launch g;
    g.control = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int mine = kernels::gpu_count() > 0 ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all == 0) {
        g.skip_reason = "no CUDA device visible: GPU tests need a GPU";
        return g;
    }
    launch_config cfg;
    cfg.device = device_kind::cuda;
    cfg.comm = comm;
    std::string why;
    g.binding = bind_devices(*g.control, cfg, why);
    const int failed_here = why.empty() ? 0 : 1;
    int failed = 0;
    MPI_Allreduce(&failed_here, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed) {
        g.skip_reason = "--comm " + comm_name + " cannot run on this machine's GPUs at this rank " +
                        "count (NCCL needs a GPU per rank)";
        return g;
    }
    g.world = comm::make_world(comm, comm::memory_space::device);
    g.dev = kernels::make_executor(device_kind::cuda);
    return g;
}

/// Collective: plan `cfg` (one case expected) for the GPU launch and run it.
inline case_record run_on_gpu(gpu_launch& g, launch_config cfg) {
    cfg.device = device_kind::cuda;
    cfg.comm = g.world->backend();
    jobs::launch_info launch;
    launch.world_size = g.control->size();
    launch.device = device_kind::cuda;
    launch.comm = cfg.comm;
    launch.host_bytes_per_rank = 8ull << 30;
    launch.device_bytes_per_rank = g.binding.budget_bytes;
    const auto cases = plan_launch(cfg, launch);
    EXPECT_EQ(cases.size(), 1u);
    jobs::run_context ctx{*g.world, *g.control, *g.dev, launch, 1, true, 7};
    return run_case(cases.at(0), cfg, ctx);
}

} // namespace ringscale::testing_support

/// Skip the current test, with its reason, when `launch` cannot run here.
#define RINGSCALE_SKIP_UNLESS_LAUNCHED(launch)                                                     \
    if (!(launch).skip_reason.empty())                                                             \
    GTEST_SKIP() << (launch).skip_reason
