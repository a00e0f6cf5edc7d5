// The machine watched over a launch (src/engine/machine_probe, sentinel, launch_monitor) at
// np=1, 2, 4: one machine for ranks sharing a kernel, every field one value per rank, within
// its range and the same on every rank, the sentinel's probe agreed by every rank, and its
// schedule's budget.
#include "comm/communicator.hpp"
#include "kernels/executor.hpp"
#include "kernels/threads.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/machine_probe.hpp"
#include "src/engine/sentinel.hpp"

#include <chrono>
#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale;
namespace ds = schema::machine_ds;

namespace {

void spin_for(double seconds) {
    volatile double x = 0;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(static_cast<long>(seconds * 1e6));
    while (std::chrono::steady_clock::now() < until)
        x = x + 1;
}

} // namespace

TEST(machine_probe, one_machine_and_fields_per_rank) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int n = world->size();
    const machine_context ctx = make_machine_context(*world, 1, "", 1);
    EXPECT_FALSE(ctx.cores.empty());
    EXPECT_EQ(ctx.machine_of, std::vector<int>(static_cast<std::size_t>(n), 0)); // one kernel
    world->barrier();
    const machine_window w = open_window(ctx);
    spin_for(0.2);
    world->barrier();
    const machine::machine_fields f = close_window(*world, ctx, w);
    for (const std::string& name : schema::machine_datasets()) {
        if (name.rfind("gpu_", 0) == 0) {
            EXPECT_EQ(f.count(name), 0u) << name << ": no GPU asked for";
            continue;
        }
        ASSERT_EQ(f.at(name).size(), static_cast<std::size_t>(n)) << name;
    }
    EXPECT_EQ(f.at(ds::own_threads), std::vector<double>(static_cast<std::size_t>(n), n));
    EXPECT_EQ(f.at(ds::load_cores)[0], static_cast<double>(ctx.cores.size()));
    EXPECT_EQ(machine::machine_fields_problem(f, n), "");
    // Every rank computed the same fields (one all-gather): compare rank 0's.
    std::vector<double> mine = f.at(ds::foreign_load), root = mine;
    world->broadcast(root.data(), root.size(), comm::dtype::f64, 0);
    EXPECT_EQ(mine, root);
}

TEST(machine_probe, the_sentinel_probe_is_agreed) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::launch_info launch;
    launch.world_size = world->size();
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 1};
    const machine_context mctx = make_machine_context(*world, 1, "", 1);
    const int launcher = kernels::blas_threads();
    kernels::set_blas_threads(2);
    const machine::probe p = run_sentinel_probe(ctx, mctx, 3);
    EXPECT_EQ(kernels::blas_threads(), 2) << "the probe's one thread is the probe's alone";
    kernels::set_blas_threads(launcher);
    EXPECT_EQ(p.before_case, 3);
    EXPECT_GT(p.compute_s, 0);
    EXPECT_LT(p.compute_s, 10);
    if (world->size() == 1)
        EXPECT_TRUE(std::isnan(p.allreduce_s)) << "no allreduce at one rank";
    else
        EXPECT_GT(p.allreduce_s, 0);
    double root[2] = {p.compute_s, p.allreduce_s};
    world->broadcast(root, 2, comm::dtype::f64, 0);
    EXPECT_EQ(root[0], p.compute_s);
    EXPECT_EQ(machine::probes_problem({p}, 3), "");
}

TEST(sentinel_schedule, every_n_cases_or_by_budget) {
    sentinel_schedule every2(2);
    EXPECT_TRUE(every2.due()); // --sentinel N: a probe at launch start
    every2.probe_ran(0.01, 0);
    EXPECT_FALSE(every2.due());
    every2.case_ended(5);
    EXPECT_FALSE(every2.due());
    every2.case_ended(6);
    EXPECT_TRUE(every2.due());
    EXPECT_TRUE(every2.final_due()); // --sentinel N: the end probe always runs
    // Auto: a probe is due once all probes and one more of their mean cost fit in
    // 1% of the launch so far: after a 10 ms probe, at 100 x (10 + 10) ms = 2 s.
    sentinel_schedule aut(0);
    EXPECT_FALSE(aut.due()); // auto: no probe until the launch can afford two (1 s)
    EXPECT_FALSE(aut.final_due());
    aut.case_ended(0.5);
    EXPECT_FALSE(aut.due());
    aut.case_ended(1.0);
    EXPECT_TRUE(aut.due());
    aut.probe_ran(0.01, 1.01);
    aut.case_ended(1.5);
    EXPECT_FALSE(aut.due());
    EXPECT_FALSE(aut.final_due()); // a 1.5 s launch keeps its one probe
    aut.case_ended(2.0);
    EXPECT_TRUE(aut.due());
    EXPECT_TRUE(aut.final_due());
    aut.probe_ran(0.03, 2.05); // 40 ms so far, 20 ms each: the next fits at 6 s
    aut.case_ended(4.1);
    EXPECT_FALSE(aut.due());
    aut.case_ended(6.0);
    EXPECT_TRUE(aut.due());
}
