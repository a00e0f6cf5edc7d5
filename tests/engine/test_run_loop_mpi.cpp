// The run loop and results writer at np=1, 2, 4: every collective validated, records
// complete on every rank, and the file rank 0 writes reads back with the schema.
#include "analysis/reading/reader.hpp"
#include "comm/communicator.hpp"
#include "jobs/registry.hpp"
#include "src/base/h5.hpp"
#include "src/engine/results_writer.hpp"
#include "src/engine/run_loop.hpp"

#include "kernels/executor.hpp"
#include <cstdio>
#include <iostream>

#include <gtest/gtest.h>
#include <unistd.h>

using namespace ringscale;

namespace {
launch_config small_config() {
    launch_config cfg;
    cfg.jobs = {"collectives"};
    cfg.params = {{"op", {"all"}},
                  {"min-bytes", {"64"}},
                  {"max-bytes", {"64K"}},
                  {"step-factor", {"32"}},
                  {"root", {"0"}}};
    cfg.warmup = 2;
    cfg.iters = 3;
    cfg.resolved_text = "job = collectives\n";
    cfg.cmdline = {"ringscale", "--test"};
    return cfg;
}
} // namespace

TEST(run_loop, every_collective_validates_at_any_rank_count) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg = small_config();
    jobs::launch_info launch;
    launch.world_size = world->size();
    launch.host_bytes_per_rank = 1ull << 30;
    const auto cases = plan_launch(cfg, launch);
    ASSERT_EQ(cases.size(), 6u * 3u); // 6 ops x {64, 2K, 64K}
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 1};
    for (const auto& pc : cases) {
        const case_record rec = run_case(pc, cfg, ctx);
        const auto status = std::get<std::string>(rec.flat().at("status"));
        if (status == "skipped")
            continue; // 64 B allgather etc. at np=4 is below one float per rank
        EXPECT_EQ(status, "ok") << pc.plan.variant << ": "
                                << std::get<std::string>(rec.flat().at("error"));
        EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1);
        EXPECT_EQ(jobs::attr_number(rec.flat(), "wrong_elements"), 0);
        EXPECT_EQ(rec.rows, 5);
        EXPECT_EQ(rec.time_s.size(), 5u * world->size());
        EXPECT_EQ(rec.is_warmup, (std::vector<std::uint8_t>{1, 1, 0, 0, 0}));
        for (double t : rec.time_s)
            EXPECT_GT(t, 0.0);
        EXPECT_GT(rec.median_step_s(), 0.0);
        EXPECT_GE(rec.peak_host_bytes[0], jobs::attr_number(rec.flat(), "bytes") / world->size());
    }
}

TEST(run_loop, writer_round_trip) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg = small_config();
    cfg.params["op"] = {"allreduce"};
    jobs::launch_info launch;
    launch.world_size = world->size();
    launch.host_bytes_per_rank = 1ull << 30;
    const auto cases = plan_launch(cfg, launch);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 1};
    std::vector<case_record> recs;
    for (const auto& pc : cases)
        recs.push_back(run_case(pc, cfg, ctx));
    if (world->rank() != 0)
        return;
    run_metadata md;
    md.attrs["jobsize"] = static_cast<std::int64_t>(world->size());
    md.hosts = {"h0"};
    md.host_index.assign(static_cast<std::size_t>(world->size()), 0);
    md.local_rank.assign(static_cast<std::size_t>(world->size()), 0);
    const std::string path = "/tmp/ringscale_rt_" + std::to_string(getpid()) + ".h5";
    {
        results_writer w(path, cfg, md);
        for (std::size_t i = 0; i < recs.size(); ++i)
            w.append(static_cast<int>(i), recs[i]);
        w.finish(true);
    }
    auto f = h5::file::open_read(path);
    auto root = f.root();
    EXPECT_EQ(root.attr_string("schema"), "ringscale/2");
    EXPECT_EQ(root.attr_int("complete"), 1);
    EXPECT_EQ(root.open_group("meta").read_string("config"), "job = collectives\n");
    auto g = root.open_group("cases").open_group("0001");
    // Identity, run, derived and outcome apart: what the user chose is keyed, the rest not.
    EXPECT_EQ(g.open_group("identity").attr_string("job"), "collectives");
    EXPECT_EQ(g.open_group("identity").attr_int("world_size"), world->size());
    EXPECT_EQ(g.open_group("identity").attr_string("op"), "allreduce");
    EXPECT_FALSE(g.open_group("identity").has_attr("status"));
    EXPECT_EQ(g.open_group("outcome").attr_string("status"), "ok");
    EXPECT_EQ(g.open_group("run").attr_int("iterations"), 3);
    EXPECT_TRUE(g.open_group("derived").has_attr("busbw_factor"));
    EXPECT_EQ(g.read<std::int32_t>("affinity_cores").size(),
              static_cast<std::size_t>(world->size()));
    std::vector<hsize_t> dims;
    const auto t = g.read<double>("time_s", &dims);
    EXPECT_EQ(dims, (std::vector<hsize_t>{5, static_cast<hsize_t>(world->size())}));
    EXPECT_EQ(t, recs[1].time_s);

    // The same file through ringscale-stats' reader: the schema is a contract both ways.
    std::vector<std::string> warnings;
    const auto read = analysis::read_results_file(path, &warnings);
    ASSERT_EQ(read.size(), recs.size());
    EXPECT_TRUE(warnings.empty());
    EXPECT_TRUE(read[1].file->complete);
    EXPECT_EQ(read[1].job, "collectives");
    EXPECT_EQ(read[1].world_size, world->size());
    EXPECT_EQ(read[1].rows, 5u);
    EXPECT_EQ(read[1].time_s, recs[1].time_s);
    EXPECT_EQ(read[1].measured_rows().size(), 3u);
    EXPECT_EQ(read[1].number("bytes"), jobs::attr_number(recs[1].flat(), "bytes"));
    EXPECT_EQ(read[1].identity.count("busbw_factor"), 0u);
    EXPECT_EQ(read[1].memory_bytes.at("peak_host_bytes").size(),
              static_cast<std::size_t>(world->size()));
    // CPU time per phase beside wall time, and the hardware counts or why there are none:
    // written by every rank's run loop, read back as written.
    for (const char* name : schema::cpu_datasets) {
        ASSERT_EQ(recs[1].cpu.count(name), 1u) << name;
        EXPECT_EQ(g.read<double>(name, &dims).size(), t.size()) << name;
        ASSERT_EQ(read[1].cpu.count(name), 1u) << name;
        EXPECT_EQ(read[1].cpu.at(name).size(), t.size()) << name;
    }
    const std::vector<double>& cpu = read[1].cpu.at(schema::ds_cpu_s);
    double cpu_total = 0;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_GE(cpu[i], 0) << i;
        EXPECT_GE(cpu[i] + 1e-6, read[1].cpu.at(schema::ds_compute_cpu_s)[i]) << i;
        cpu_total += cpu[i];
    }
    EXPECT_GT(cpu_total, 0); // every rank computed and communicated
    const std::string hw = g.open_group("outcome").attr_string("hw_counters");
    const std::vector<double>& instructions = read[1].cpu.at(schema::ds_instructions);
    if (hw == "instructions, cycles") {
        for (const double n : instructions)
            EXPECT_GT(n, 0);
    } else {
        EXPECT_EQ(hw.rfind("not supported: ", 0), 0u) << hw;
        std::cout << "hardware counters: " << hw << "\n";
    }
    std::remove(path.c_str());
}
