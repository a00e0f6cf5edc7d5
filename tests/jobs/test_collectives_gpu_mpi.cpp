// The collectives job on CUDA devices at np=1 and 2, as the launcher runs it: every operation
// out of place and in place, over NCCL (a GPU per rank) and over MPI staged through pinned
// host memory (ranks may share a GPU), each validated exactly after a fresh upload. Skips,
// with the reason, where no GPU is visible.
#include "jobs/collectives_ops.hpp"
#include "jobs/registry.hpp"
#include "src/base/error.hpp"
#include "tests/support/gpu_job_support.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using testing_support::gpu_launch;

namespace {

launch_config config_of(const std::string& op, const std::string& bytes, bool inplace) {
    launch_config cfg;
    cfg.jobs = {"collectives"};
    cfg.params = {{"op", {op}},           {"min-bytes", {bytes}},
                  {"max-bytes", {bytes}}, {"step-factor", {"2"}},
                  {"root", {"0"}},        {"inplace", {inplace ? "1" : "0"}}};
    cfg.warmup = 1;
    cfg.iters = 3;
    cfg.validate = validate_mode::on;
    return cfg;
}

void expect_valid(gpu_launch& g, const std::string& op, const std::string& bytes, bool inplace) {
    const std::string what = op + " " + bytes + (inplace ? " in place" : " out of place") +
                             " over " + to_string(g.world->backend());
    const case_record rec = testing_support::run_on_gpu(g, config_of(op, bytes, inplace));
    ASSERT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
        << what << ": " << std::get<std::string>(rec.flat().at("error"));
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1) << what;
    EXPECT_EQ(jobs::attr_number(rec.flat(), "wrong_elements"), 0) << what;
    EXPECT_EQ(jobs::attr_number(rec.flat(), "inplace"), inplace ? 1 : 0) << what;
    // Timed on the device: the whole step is communication, inside the step's time.
    for (std::size_t i = 0; i < rec.time_s.size(); ++i) {
        EXPECT_GT(rec.time_s[i], 0.0) << what;
        EXPECT_GT(rec.comm_wait_s[i], 0.0) << what;
        EXPECT_LE(rec.comm_wait_s[i], rec.time_s[i] * 1.05 + 1e-4) << what;
    }
    // The buffers are device memory: one buffer in place, two out of place.
    const jobs::collective_sizes sz =
        jobs::find_op(op).sizes(std::stoull(bytes), g.control->size());
    const std::uint64_t need = (inplace ? sz.inplace_count : sz.send_count + sz.recv_count) * 4;
    for (auto b : rec.peak_device_bytes)
        EXPECT_GE(b, need) << what;
}

class collectives_gpu : public ::testing::TestWithParam<const char*> {};

TEST_P(collectives_gpu, every_op_in_and_out_of_place_validates) {
    gpu_launch g = testing_support::make_gpu_launch(GetParam());
    RINGSCALE_SKIP_UNLESS_LAUNCHED(g);
    const bool nccl = g.world->backend() == comm_kind::nccl;
    for (const auto& op : jobs::all_ops())
        for (const bool inplace : {false, true}) {
            if (inplace && (op.no_in_place || (nccl && op.name == "alltoall"))) {
                // No in-place form here: refused at plan time, before any work.
                EXPECT_THROW(testing_support::run_on_gpu(g, config_of(op.name, "1048576", true)),
                             config_error)
                    << op.name;
                continue;
            }
            // 1 MiB, and a size that is not a power of two.
            expect_valid(g, op.name, "1048576", inplace);
            expect_valid(g, op.name, "1000004", inplace);
        }
}

INSTANTIATE_TEST_SUITE_P(comm, collectives_gpu, ::testing::Values("nccl", "mpi"));

} // namespace
