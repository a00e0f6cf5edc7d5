// The numerics tests' launch: one planned train_step case run once on the CPU executor over
// the MPI world, as the launcher runs it (no warm-up, one iteration, validation on).
#pragma once

#include "comm/communicator.hpp"
#include "kernels/executor.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace ringscale::test_jobs {

/// `cfg` (its job and parameters set) planned for `world` with `host_bytes` per rank, its one
/// case run; a failed expectation unless the plan holds exactly one case.
inline case_record run_one_cpu_case(launch_config& cfg, comm::communicator& world,
                                    std::uint64_t host_bytes) {
    cfg.warmup = 0;
    cfg.iters = 1;
    cfg.validate = validate_mode::on;
    jobs::launch_info launch;
    launch.world_size = world.size();
    launch.host_bytes_per_rank = host_bytes;
    const auto cases = plan_launch(cfg, launch);
    EXPECT_EQ(cases.size(), 1u);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{world, world, *dev, launch, 1, true, 7};
    return run_case(cases.at(0), cfg, ctx);
}

} // namespace ringscale::test_jobs
