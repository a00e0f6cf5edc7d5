#include "jobs/registry.hpp"
#include "src/base/error.hpp"
#include "src/engine/run_loop.hpp"
#include "src/launcher/cli.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace ringscale;

namespace {
launch_config parse(std::vector<std::string> args) {
    args.insert(args.begin(), "ringscale");
    std::vector<const char*> argv;
    for (auto& a : args)
        argv.push_back(a.c_str());
    auto r = parse_cli(static_cast<int>(argv.size()), argv.data());
    if (!r.config)
        throw std::runtime_error("no config: " + r.message);
    return *r.config;
}

std::string write_file(const std::string& text) {
    const std::string path = "/tmp/ringscale_test_cli_" + std::to_string(getpid()) + ".ini";
    std::ofstream(path) << text;
    return path;
}
} // namespace

TEST(cli, defaults) {
    const auto c = parse({});
    EXPECT_EQ(c.jobs, (std::vector<std::string>{"collectives"}));
    EXPECT_EQ(c.warmup, 5);
    EXPECT_EQ(c.iters, 20);
    EXPECT_EQ(c.output, "results/");
    EXPECT_EQ(c.params.at("op"), (std::vector<std::string>{"all"}));
    EXPECT_EQ(c.validate, validate_mode::automatic);
}

TEST(cli, lists_short_options_and_resolved_text) {
    const auto c = parse({"--op", "allreduce,sendrecv", "-b", "4K", "-n", "3", "-w", "0"});
    EXPECT_EQ(c.params.at("op"), (std::vector<std::string>{"allreduce", "sendrecv"}));
    EXPECT_EQ(c.params.at("min-bytes"), (std::vector<std::string>{"4K"}));
    EXPECT_EQ(c.iters, 3);
    EXPECT_EQ(c.warmup, 0);
    EXPECT_NE(c.resolved_text.find("op = allreduce,sendrecv\n"), std::string::npos);
}

TEST(cli, command_line_overrides_job_file) {
    const auto path = write_file("job = collectives\nop = broadcast\niters = 7\nmax-bytes = 1M\n");
    const auto c = parse({path, "--iters", "9"});
    EXPECT_EQ(c.iters, 9);
    EXPECT_EQ(c.params.at("op"), (std::vector<std::string>{"broadcast"}));
    EXPECT_EQ(c.params.at("max-bytes"), (std::vector<std::string>{"1M"}));
    EXPECT_EQ(c.job_file, path);
    std::remove(path.c_str());
}

TEST(cli, bad_input_is_a_config_error) {
    EXPECT_THROW(parse({"--no-such-option"}), config_error);
    EXPECT_THROW(parse({"--job", "nope"}), config_error);
    EXPECT_THROW(parse({"--iters", "abc"}), config_error);
    EXPECT_THROW(parse({"--iters", "0"}), config_error);
    EXPECT_THROW(parse({"--warmup", "-1"}), config_error);
    EXPECT_THROW(parse({"--device", "tpu"}), config_error);
    EXPECT_THROW(parse({"--validate", "sometimes"}), config_error);
    EXPECT_THROW(parse({"/nonexistent/job.ini"}), config_error);
    const auto bad = write_file("this is not ini\n[[[\n");
    EXPECT_THROW(parse({bad}), config_error);
    std::remove(bad.c_str());
}

TEST(cli, attn_kernel_is_checked_and_needs_cuda_unless_auto) {
    EXPECT_EQ(parse({}).attn_kernel, "auto");
    EXPECT_EQ(parse({"--device", "cuda", "--attn-kernel", "sm90"}).attn_kernel, "sm90");
    EXPECT_EQ(parse({"--device", "cuda", "--attn-kernel", "sm80"}).attn_kernel, "sm80");
    EXPECT_EQ(parse({"--attn-kernel", "auto"}).attn_kernel, "auto"); // cpu: nothing to pick
    EXPECT_THROW(parse({"--device", "cuda", "--attn-kernel", "sm100"}), config_error);
    try {
        parse({"--attn-kernel", "sm90"});
        ADD_FAILURE() << "--attn-kernel sm90 accepted with --device cpu";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("needs --device cuda"), std::string::npos);
    }
}

TEST(cli, help_and_list_return_text_only) {
    const char* argv[] = {"ringscale", "--help"};
    auto r = parse_cli(2, argv);
    EXPECT_FALSE(r.config);
    EXPECT_NE(r.message.find("--min-bytes"), std::string::npos);
    const char* argv2[] = {"ringscale", "--list-jobs"};
    EXPECT_NE(parse_cli(2, argv2).message.find("collectives"), std::string::npos);
}

TEST(cli, repeat_defaults_to_one_and_rejects_zero) {
    EXPECT_EQ(parse({}).repeat, 1);
    const auto c = parse({"--repeat", "3"});
    EXPECT_EQ(c.repeat, 3);
    EXPECT_NE(c.resolved_text.find("repeat = 3\n"), std::string::npos);
    EXPECT_THROW(parse({"--repeat", "0"}), config_error);
    EXPECT_THROW(parse({"--repeat", "two"}), config_error);
}

TEST(cli, repeat_plans_interleaved_repetitions) {
    const auto c =
        parse({"--op", "allreduce,sendrecv", "-b", "1K", "-e", "2K", "-f", "2", "--repeat", "3"});
    jobs::launch_info launch;
    launch.world_size = 2;
    launch.host_bytes_per_rank = 1ull << 30;
    const auto cases = plan_launch(c, launch);
    ASSERT_EQ(cases.size(), 12u); // 4 planned cases, 3 times
    for (std::size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(cases[i].repeat, static_cast<int>(i / 4)); // 1..K, then 1..K again
        EXPECT_EQ(cases[i].plan.values.values(), cases[i % 4].plan.values.values());
    }
    EXPECT_NE(cases[0].plan.values.values(), cases[1].plan.values.values());
    EXPECT_EQ(interleave_repeats(cases, 1).size(), cases.size());
}
