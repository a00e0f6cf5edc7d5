// Every mask under every scheme at np = 1, 2, 4 (registered per rank count): ring attention
// (contiguous, zigzag, striped, balanced), all-gather, Ulysses and hybrid, forward and
// forward+backward, each validated against the single-rank reference with the same mask on
// the same seeded inputs (through the run loop, as the launcher runs it). The masks include
// documents crossing rank boundaries, a window larger than a shard and one within it, and a
// dilation that leaves whole ranks (at np 4) and most rows without a visible key.
#include "comm/communicator.hpp"
#include "jobs/attention_common.hpp"
#include "jobs/registry.hpp"
#include "src/engine/run_loop.hpp"

#include "kernels/executor.hpp"

#include <gtest/gtest.h>

using namespace ringscale;

namespace {

using option_list = std::vector<std::pair<std::string, std::string>>;

case_record run(const std::string& job, const std::string& variant, const std::string& layout,
                const std::string& pass, const option_list& mask) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg;
    cfg.jobs = {job};
    cfg.params = {{"seq-len", {"256"}}, {"seq-preset", {""}}, {"batch", {"1"}},
                  {"heads", {"4"}},     {"kv-heads", {"4"}},  {"head-dim", {"64"}},
                  {"causal", {"1"}},    {"pass", {pass}},     {"layout", {layout}}};
    if (job == "ring_attention") {
        cfg.params["overlap"] = {"on"};
        cfg.params["kv-heads"] = {"2"}; // grouped-query attention on the ring
    } else {
        cfg.params["variant"] = {variant};
    }
    for (const auto& [name, value] : mask)
        cfg.params[name] = {value};
    cfg.warmup = 0;
    cfg.iters = 1;
    cfg.validate = validate_mode::on;
    jobs::launch_info launch;
    launch.world_size = world->size();
    launch.host_bytes_per_rank = 1ull << 30;
    const auto cases = plan_launch(cfg, launch);
    EXPECT_EQ(cases.size(), 1u);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 11};
    return run_case(cases.at(0), cfg, ctx);
}

std::string text_of(const case_record& rec, const char* name) {
    const auto flat = rec.flat();
    const auto it = flat.find(name);
    return it == flat.end() ? "" : std::get<std::string>(it->second);
}

void expect_valid(const case_record& rec, const std::string& what) {
    EXPECT_EQ(text_of(rec, "status"), "ok") << what << ": " << text_of(rec, "error");
    EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1) << what;
    EXPECT_EQ(jobs::attr_number(rec.flat(), "wrong_elements"), 0) << what;
}

// The masks; document lengths divisible by 8 so zigzag per document runs at np 4.
const std::vector<std::pair<std::string, option_list>>& masks() {
    static const std::vector<std::pair<std::string, option_list>> m = {
        {"window within a shard", {{"window", "24"}}},
        {"window beyond a shard", {{"window", "100"}}},
        {"non-causal window", {{"window", "40"}, {"causal", "0"}}},
        {"documents crossing ranks", {{"docs", "104+64+24+64"}}},
        {"block-sparse random", {{"sparsity", "0.5"}, {"sparse-block", "32"}}},
        {"block-sparse local+global",
         {{"sparsity", "0.6"}, {"sparse-block", "32"}, {"sparse-pattern", "local_global"}}},
        {"dilated", {{"dilation", "64:2+128:4"}}},
        {"ranks without work", {{"dilation", "128:128"}}},
        {"window and documents", {{"window", "30"}, {"docs", "fixed:64"}}},
    };
    return m;
}

struct scheme {
    const char* job;
    const char* variant;
    const char* layout;
};

} // namespace

class attention_masks_mpi : public ::testing::TestWithParam<scheme> {};

TEST_P(attention_masks_mpi, every_mask_matches_the_reference) {
    const scheme s = GetParam();
    for (const auto& [name, mask] : masks())
        for (const char* pass : {"fwd", "fwd+bwd"}) {
            option_list opts = mask;
            std::string layout = s.layout;
            const std::string what =
                std::string(s.job) + "/" + s.variant + "/" + layout + " " + name + " " + pass;
            expect_valid(run(s.job, s.variant, layout, pass, opts), what);
        }
}

INSTANTIATE_TEST_SUITE_P(schemes, attention_masks_mpi,
                         ::testing::Values(scheme{"ring_attention", "", "contiguous"},
                                           scheme{"ring_attention", "", "zigzag"},
                                           scheme{"ring_attention", "", "striped"},
                                           scheme{"ring_attention", "", "balanced"},
                                           scheme{"context_parallel", "allgather", "zigzag"},
                                           scheme{"context_parallel", "ulysses", "contiguous"},
                                           scheme{"context_parallel", "hybrid", "zigzag"}),
                         [](const auto& info) {
                             return std::string(info.param.variant[0] ? info.param.variant
                                                                      : "ring") +
                                    "_" + info.param.layout;
                         });

// A causal window within a shard needs only the previous rank's block: one exchange.
TEST(attention_masks_mpi_schedule, a_window_within_a_shard_exchanges_one_block) {
    const auto rec = run("ring_attention", "", "contiguous", "fwd", {{"window", "24"}});
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int p = world->size();
    const double kv_bytes = 2.0 * 1 * 2 * (256.0 / p) * 64 * 4; // K and V: B 1, Hkv 2, fp32
    EXPECT_DOUBLE_EQ(jobs::attr_number(rec.flat(), "comm_bytes_per_iter"), p > 1 ? kv_bytes : 0.0);
}

// Zigzag per document gives every rank the same causal work within each document.
TEST(attention_masks_mpi_schedule, zigzag_per_document_balances_the_work) {
    const auto zig = run("ring_attention", "", "zigzag", "fwd", {{"docs", "104+64+24+64"}});
    EXPECT_NEAR(jobs::attr_number(zig.flat(), "work_imbalance"), 1.0, 1e-12);
    const auto flat = zig.flat();
    // FLOPs from the exact pairs: 4*B*H*D per visible pair, the causal triangles of the docs.
    const double pairs = (104.0 * 105 + 64 * 65 + 24 * 25 + 64 * 65) / 2;
    EXPECT_DOUBLE_EQ(jobs::attr_number(flat, "visible_pairs"), pairs);
    EXPECT_DOUBLE_EQ(jobs::attr_number(flat, "flops_per_iter"), 4.0 * 4 * 64 * pairs);
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    if (world->size() > 1) {
        const auto cont =
            run("ring_attention", "", "contiguous", "fwd", {{"docs", "104+64+24+64"}});
        EXPECT_GT(jobs::attr_number(cont.flat(), "work_imbalance"), 1.1);
    }
}
