// The results schema's groups (src/base/results_schema.hpp), the launcher's case identity and
// key (src/engine/case_identity.hpp) and the CPU-affinity warning (src/engine/affinity.hpp).
#include "jobs/registry.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/affinity.hpp"
#include "src/engine/case_identity.hpp"
#include "src/engine/run_loop.hpp"
#include "src/launcher/cli.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using schema::attr_group;

namespace {

launch_config parse(std::vector<std::string> args) {
    args.insert(args.begin(), "ringscale");
    std::vector<const char*> argv;
    for (auto& a : args)
        argv.push_back(a.c_str());
    return *parse_cli(static_cast<int>(argv.size()), argv.data()).config;
}

/// The identity of every planned case at `world` ranks, without world_size.
std::vector<jobs::attr_map> identities(const launch_config& cfg, int world) {
    jobs::launch_info launch;
    launch.world_size = world;
    launch.host_bytes_per_rank = 1ull << 40;
    std::vector<jobs::attr_map> out;
    for (const auto& pc : plan_launch(cfg, launch)) {
        out.push_back(case_identity(pc, cfg, launch));
        EXPECT_EQ(std::get<std::int64_t>(out.back().at("world_size")), world);
        EXPECT_EQ(std::get<std::int64_t>(out.back().at("nodes")), 1); // one node: all ranks
        EXPECT_EQ(std::get<std::int64_t>(out.back().at("ranks_per_node")), world);
        out.back().erase("world_size");
        out.back().erase("ranks_per_node");
    }
    return out;
}

} // namespace

TEST(results_schema, job_attributes_are_derived_or_outcome) {
    EXPECT_EQ(schema::job_attr_group("dp"), attr_group::derived);
    EXPECT_EQ(schema::job_attr_group("memory_convention"), attr_group::derived);
    EXPECT_EQ(schema::job_attr_group("final_loss"), attr_group::outcome);
    EXPECT_EQ(schema::job_attr_group("validate_grad_max_abs_err"), attr_group::outcome);
    EXPECT_EQ(schema::job_attr_group("wrong_elements"), attr_group::outcome);
}

TEST(results_schema, version_1_table) {
    EXPECT_EQ(schema::v1_attr_group("seq_len"), attr_group::identity);
    EXPECT_EQ(schema::v1_attr_group("requested_bytes"), attr_group::identity);
    EXPECT_EQ(schema::v1_attr_group("dp"), attr_group::derived);
    EXPECT_EQ(schema::v1_attr_group("bytes"), attr_group::derived); // rounded per P
    EXPECT_EQ(schema::v1_attr_group("ulysses_degree"), attr_group::derived);
    EXPECT_EQ(schema::v1_attr_group("parameters"), attr_group::derived);
    EXPECT_EQ(schema::v1_attr_group("warmup"), attr_group::run);
    EXPECT_EQ(schema::v1_attr_group("status"), attr_group::outcome);
    EXPECT_EQ(schema::v1_attr_group("validate_loss_tolerance"), attr_group::outcome);
    EXPECT_TRUE(schema::readable("ringscale/1"));
    EXPECT_TRUE(schema::readable("ringscale/2"));
    EXPECT_FALSE(schema::readable("ringscale/3"));
    EXPECT_STREQ(schema::group_name(attr_group::outcome), "outcome");
}

TEST(results_schema, job_values_never_overwrite_the_users_choice) {
    jobs::attr_map identity = {{"dp", std::int64_t{0}},
                               {"cp", std::int64_t{1}},
                               {"dtype", std::string("fp32")},
                               {"kv_heads", std::int64_t{0}}};
    jobs::attr_map derived, outcome;
    sort_job_attrs({{"dp", std::int64_t{2}},
                    {"cp", std::int64_t{1}},
                    {"dtype", std::string("float32")},
                    {"kv_heads", std::int64_t{8}},
                    {"final_loss", 4.5},
                    {"parameters", std::int64_t{1000}}},
                   identity, derived, outcome);
    EXPECT_EQ(std::get<std::int64_t>(identity.at("dp")), 0); // the user's: 0 = ranks / cp
    EXPECT_EQ(std::get<std::int64_t>(derived.at("dp")), 2);
    EXPECT_EQ(derived.count("cp"), 0u); // the same as the identity's: not repeated
    EXPECT_EQ(std::get<std::string>(identity.at("dtype")), "float32"); // resolved without P
    EXPECT_EQ(std::get<std::int64_t>(identity.at("kv_heads")), 8);
    EXPECT_EQ(std::get<double>(outcome.at("final_loss")), 4.5);
    EXPECT_EQ(derived.count("parameters"), 1u);
}

TEST(results_schema, case_key_is_identity_and_run_only) {
    const jobs::attr_map id = {{"job", std::string("collectives")},
                               {"world_size", std::int64_t{2}}};
    const jobs::attr_map run = {{"iterations", std::int64_t{20}}};
    const std::string key = case_key(id, run);
    EXPECT_EQ(key.size(), 16u);
    EXPECT_EQ(key, case_key(id, run));
    jobs::attr_map other = id;
    other["world_size"] = std::int64_t{4};
    EXPECT_NE(key, case_key(other, run));
    EXPECT_NE(key, case_key(id, {{"iterations", std::int64_t{50}}}));
}

TEST(results_schema, topology_is_in_the_identity_and_old_keys_still_match) {
    const launch_config cfg = parse(
        {"--job", "collectives", "--op", "allreduce", "-b", "1K", "-e", "1K", "--scope", "inter"});
    jobs::launch_info launch;
    launch.world_size = 4;
    launch.host_bytes_per_rank = 1ull << 40;
    launch.nodes = comm::node_layout::blocks(4, 1);
    const auto cases = plan_launch(cfg, launch);
    ASSERT_EQ(cases.size(), 1u);
    const jobs::attr_map across = case_identity(cases[0], cfg, launch);
    EXPECT_EQ(std::get<std::int64_t>(across.at("nodes")), 4);
    EXPECT_EQ(std::get<std::int64_t>(across.at("ranks_per_node")), 1);
    EXPECT_EQ(std::get<std::string>(across.at("scope")), "inter");
    EXPECT_EQ(across.count("uneven_nodes"), 0u);
    launch.nodes = comm::layout_of_hosts({0, 0, 0, 1}); // 3 + 1: recorded as uneven
    const jobs::attr_map uneven = case_identity(cases[0], cfg, launch);
    EXPECT_EQ(std::get<std::int64_t>(uneven.at("ranks_per_node")), 3);
    EXPECT_EQ(std::get<std::int64_t>(uneven.at("uneven_nodes")), 1);
    EXPECT_NE(case_key(across, {}), case_key(uneven, {}));
    // A file written before the topology was recorded ran on one node, scope world: its key
    // is the key of the same case written now.
    const jobs::attr_map old = {{"job", std::string("collectives")},
                                {"world_size", std::int64_t{4}}};
    jobs::attr_map now = old;
    now["nodes"] = std::int64_t{1};
    now["ranks_per_node"] = std::int64_t{4};
    now["scope"] = std::string("world");
    EXPECT_EQ(case_key(old, {}), case_key(now, {}));
    now["nodes"] = std::int64_t{4};
    now["ranks_per_node"] = std::int64_t{1};
    EXPECT_NE(case_key(old, {}), case_key(now, {}));
}

TEST(results_schema, training_identity_does_not_depend_on_p) {
    const launch_config cfg = parse({"--job", "train_step", "--layers", "2", "--hidden", "256",
                                     "--heads", "4", "--train-seq-len", "256", "--tokens", "1024",
                                     "--vocab", "512", "--dp-variant", "ddp,zero1,fsdp"});
    const auto one = identities(cfg, 1), two = identities(cfg, 2), four = identities(cfg, 4);
    ASSERT_EQ(one.size(), 3u);
    EXPECT_EQ(one, two);
    EXPECT_EQ(one, four);
    EXPECT_EQ(std::get<std::int64_t>(one[0].at("dp")), 0); // as given: 0 = ranks / cp
    EXPECT_EQ(std::get<std::int64_t>(one[0].at("threads")), 0);
}

TEST(results_schema, training_dtype_and_seeds_are_identity) {
    // --dtype auto is fp32; fp8 brings its recipe; --seeds K is K cases by data_seed.
    const launch_config cfg = parse(
        {"--job",   "train_step",      "--layers",   "1",        "--hidden", "128",     "--heads",
         "2",       "--train-seq-len", "64",         "--tokens", "256",      "--vocab", "64",
         "--dtype", "auto,fp8",        "--numerics", "10",       "--seeds",  "2"});
    const auto ids = identities(cfg, 2);
    ASSERT_EQ(ids.size(), 4u);
    EXPECT_EQ(std::get<std::string>(ids[0].at("dtype")), "fp32");
    EXPECT_EQ(ids[0].count("fp8_recipe"), 0u);
    EXPECT_EQ(std::get<std::string>(ids[3].at("dtype")), "fp8");
    EXPECT_EQ(std::get<std::string>(ids[3].at("fp8_recipe")), "delayed");
    EXPECT_EQ(std::get<std::int64_t>(ids[0].at("data_seed")), 0);
    EXPECT_EQ(std::get<std::int64_t>(ids[1].at("data_seed")), 1);
    // A file from before --dtype ran fp32: its cases keep their key.
    jobs::attr_map old = {{"job", std::string("train_step")}, {"world_size", std::int64_t{2}}};
    jobs::attr_map now = old;
    now["dtype"] = std::string("fp32");
    EXPECT_EQ(case_key(old, {}), case_key(now, {}));
    now["dtype"] = std::string("bf16");
    EXPECT_NE(case_key(old, {}), case_key(now, {}));
}

TEST(results_schema, context_parallel_identity_does_not_depend_on_p) {
    const launch_config cfg =
        parse({"--job", "context_parallel", "--variant", "allgather,ulysses,hybrid", "--seq-len",
               "1K", "--heads", "4", "--kv-heads", "4", "--head-dim", "64"});
    const auto two = identities(cfg, 2), four = identities(cfg, 4);
    ASSERT_EQ(two.size(), 3u);
    EXPECT_EQ(two, four);
    EXPECT_EQ(std::get<std::string>(two[2].at("variant")), "hybrid"); // not hybrid/u1, /u2
}

TEST(results_schema, weak_attention_identity_holds_the_rule_not_s) {
    const launch_config cfg = parse({"--job", "ring_attention,context_parallel", "--variant",
                                     "allgather,ulysses", "--seq-len-per-rank", "256", "--seq-rule",
                                     "memory,work", "--heads", "4", "--kv-heads", "4"});
    const auto one = identities(cfg, 1), two = identities(cfg, 2), four = identities(cfg, 4);
    ASSERT_EQ(one.size(), 6u);
    EXPECT_EQ(one, two);
    EXPECT_EQ(one, four);
    for (const auto& id : four) {
        EXPECT_EQ(id.count("seq_len"), 0u);
        EXPECT_EQ(std::get<std::string>(id.at("scaling")), "weak");
        EXPECT_EQ(std::get<std::int64_t>(id.at("seq_len_per_rank")), 256);
    }
    // The S a case ran goes to derived.
    jobs::attr_map identity = four[0], derived, outcome;
    sort_job_attrs({{"seq_len", std::int64_t{1024}}}, identity, derived, outcome);
    EXPECT_EQ(identity.count("seq_len"), 0u);
    EXPECT_EQ(std::get<std::int64_t>(derived.at("seq_len")), 1024);
}

TEST(results_schema, strong_attention_identity_is_unchanged_by_weak_options) {
    const auto id = identities(parse({"--job", "ring_attention", "--seq-len", "1K"}), 2);
    ASSERT_EQ(id.size(), 1u);
    EXPECT_EQ(std::get<std::string>(id[0].at("scaling")), "strong");
    EXPECT_EQ(id[0].count("seq_len_per_rank") + id[0].count("seq_rule"), 0u);
}

TEST(results_schema, threads_are_identity) {
    const auto a = identities(parse({"--op", "allreduce", "--threads", "1"}), 2);
    const auto b = identities(parse({"--op", "allreduce", "--threads", "2"}), 2);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_NE(a, b);
}

TEST(results_schema, a_forced_attention_kernel_is_identity) {
    const std::vector<std::string> ring = {"--job", "ring_attention", "--seq-len",
                                           "1K",    "--device",       "cuda"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = ring;
        args.insert(args.end(), extra.begin(), extra.end());
        return identities(parse(args), 2);
    };
    const auto sm80 = with({"--attn-kernel", "sm80"});
    const auto sm90 = with({"--attn-kernel", "sm90"});
    const auto automatic = with({});
    ASSERT_EQ(sm80.size(), 1u);
    EXPECT_EQ(std::get<std::string>(sm80[0].at("attn_kernel")), "sm80");
    EXPECT_NE(sm80, sm90);
    // auto stays out: identities (and so compare and --resume) match files from before.
    EXPECT_EQ(automatic[0].count("attn_kernel"), 0u);
    const auto coll =
        identities(parse({"--op", "allreduce", "--device", "cuda", "--attn-kernel", "sm80"}), 2);
    EXPECT_EQ(coll[0].count("attn_kernel"), 0u); // collectives run no attention
}

TEST(affinity, core_lists) {
    EXPECT_EQ(core_list_text({0, 1, 2, 3, 8}), "0-3,8");
    EXPECT_EQ(core_list_text({5}), "5");
    EXPECT_EQ(core_list_text({0, 2, 3}), "0,2-3");
    EXPECT_EQ(core_list_text({}), "");
    const cpu_affinity mine = current_affinity();
    EXPECT_GE(mine.cores, 1);
    EXPECT_FALSE(mine.list.empty());
}

TEST(affinity, warning_names_the_fix) {
    const std::string w = affinity_warning(1, 16, 1); // mpirun -np 1 bound to one core
    EXPECT_NE(w.find("--bind-to none"), std::string::npos) << w;
    EXPECT_NE(w.find("--map-by slot:PE=16"), std::string::npos) << w;
    EXPECT_NE(w.find("srun --cpus-per-task=16"), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos);
    EXPECT_NE(affinity_warning(3, 16, 4), ""); // 3 of a share of 4
    EXPECT_EQ(affinity_warning(4, 16, 4), "");
    EXPECT_EQ(affinity_warning(1, 2, 4), ""); // oversubscribed: a share below one core
}

TEST(affinity, oversubscription_is_warned) {
    // np=4 on 2 cores, unbound, one thread each: 4 threads on 2 cores.
    const std::string w = oversubscription_warning(4, 2, 1, 2);
    EXPECT_NE(w.find("oversubscribed: 4 rank(s) x 1 thread(s) = 4 threads on 2 core(s)"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("cannot pass 0.50"), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos);
    EXPECT_NE(oversubscription_warning(4, 2, 2, 2), "");    // 2 x 2 threads on 2 cores
    EXPECT_EQ(oversubscription_warning(2, 2, 1, 1), "");    // np=2 bound to a core each
    EXPECT_EQ(oversubscription_warning(2, 2, 2, 2), "");    // one rank, both cores
    EXPECT_EQ(oversubscription_warning(16, 16, 4, 16), ""); // 16 threads on 16 cores
    // One rank asked for more threads than the cores it may use.
    const std::string bound = oversubscription_warning(4, 16, 4, 2);
    EXPECT_NE(bound.find("runs 4 thread(s) on the 2 core(s)"), std::string::npos) << bound;
    // taskset -c 0 mpirun -np 2: each rank may use core 0, together one core, on a
    // node of many: counted against the union, not the node's cores.
    const std::string tasks = oversubscription_warning(2, 1, 1, 1);
    EXPECT_NE(tasks.find("oversubscribed: 2 rank(s) x 1 thread(s) = 2 threads on 1 core(s)"),
              std::string::npos)
        << tasks;
}
