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

TEST(cli, a_job_file_after_double_dash_may_start_with_a_dash) {
    // slurm/*.sbatch pass the job file after `--`: "-nightly.ini" is a file, not an option.
    const std::string path = "-ringscale_test_cli_" + std::to_string(getpid()) + ".ini";
    std::ofstream(path) << "job = collectives\niters = 7\n";
    const auto c = parse({"--output", "-out/", "--", path});
    EXPECT_EQ(c.job_file, path);
    EXPECT_EQ(c.iters, 7);
    EXPECT_EQ(c.output, "-out/");
    std::remove(path.c_str());
}

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

TEST(cli, help_shows_each_options_values_and_range_from_its_declaration) {
    const char* argv[] = {"ringscale", "--help"};
    std::string help = parse_cli(2, argv).message;
    // Boost wraps the help text: join the lines back.
    for (auto at = help.find('\n'); at != std::string::npos; at = help.find('\n', at)) {
        const auto next = help.find_first_not_of(' ', at + 1);
        help.erase(at, (next == std::string::npos ? help.size() : next) - at);
    }
    for (const char* shown : {"(1 to 1G; a list sweeps)", "(fwd|fwd+bwd; a list sweeps)",
                              "(1 to 1000000)", "(cpu|cuda)", "(on|off|auto)", "(1 to 1K; a list",
                              "(ddp|zero1|fsdp; a list sweeps)", "(0 to 1M; a list sweeps)"})
        EXPECT_NE(help.find(shown), std::string::npos) << shown;
}

TEST(cli, every_value_is_checked_before_planning) {
    // Out of range, a list where one value is taken, a sweep too large to plan: refused by
    // parse_cli itself, before any rank binds a device or plans a case.
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--job", "train_step", "--layers", "2147483648"},
          {"--job", "train_step", "--dp", "4294967298"},
          {"--job", "train_step", "--lr", "0.1,0.2"},
          {"-b", "9223372036854775808"},
          {"--repeat", "1000000000"},
          {"--job", "ring_attention", "--batch", "9223372036854775807"}})
        EXPECT_THROW(parse(args), config_error) << args.back();
    std::string many = "1";
    for (int i = 2; i <= 400; ++i)
        many += "," + std::to_string(i);
    EXPECT_THROW(parse({"--job", "ring_attention", "--batch", many, "--heads", many}),
                 config_error); // 160000 cases
    EXPECT_THROW(parse({"--op", "allreduce,sendrecv", "--inplace", "0,1", "--repeat", "1000",
                        "--job", "collectives,ring_attention", "--seq-len", many}),
                 config_error);
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

TEST(cli, labels_are_checked_sorted_and_kept_out_of_the_configuration) {
    const launch_config cfg = parse({"--label", "nccl=2.21", "--label", "commit=ab12 x"});
    ASSERT_EQ(cfg.labels.size(), 2u);
    EXPECT_EQ(cfg.labels[0], (std::pair<std::string, std::string>{"commit", "ab12 x"}));
    EXPECT_EQ(cfg.labels[1], (std::pair<std::string, std::string>{"nccl", "2.21"}));
    // Not in the job file that reproduces the launch: labels are no part of a case's identity.
    EXPECT_EQ(cfg.resolved_text.find("label"), std::string::npos);
    EXPECT_EQ(parse({}).labels.size(), 0u);
    EXPECT_THROW(parse({"--label", "novalue"}), config_error);
    EXPECT_THROW(parse({"--label", "=x"}), config_error);
    EXPECT_THROW(parse({"--label", "a b=x"}), config_error);
    EXPECT_THROW(parse({"--label", "k=a\nb"}), config_error);
    EXPECT_THROW(parse({"--label", "k=" + std::string(300, 'x')}), config_error);
    EXPECT_THROW(parse({"--label", "k=1", "--label", "k=2"}), config_error);
}

TEST(cli, numerics_alone_follows_200_steps_and_a_value_is_checked) {
    const auto steps = [](std::vector<std::string> args) {
        args.insert(args.begin(), {"--job", "train_step"});
        return parse(args).params.at("numerics");
    };
    using list = std::vector<std::string>;
    EXPECT_EQ(steps({"--numerics"}), list{"200"}); // alone: the default length
    EXPECT_EQ(steps({"--numerics", "--dtype", "bf16"}), list{"200"});
    EXPECT_EQ(steps({"--numerics", "50"}), list{"50"});
    EXPECT_EQ(steps({"--numerics=7"}), list{"7"});
    EXPECT_EQ(parse({"--job", "train_step"}).params.at("numerics"), list{"0"}); // default: off
    for (const std::vector<std::string>& bad :
         {list{"--numerics", "100001"}, list{"--numerics=-1"}, list{"--numerics", "-1"},
          list{"--numerics", "1e3"}, list{"--numerics", "abc"}, list{"--numerics", "9e99"},
          list{"--numerics", "50,100"}}) {
        list args = {"--job", "train_step"};
        args.insert(args.end(), bad.begin(), bad.end());
        EXPECT_THROW(parse(args), config_error) << bad.back();
    }
    // A negative value is the option's value, refused by its range, not an option "-1".
    for (const list& negative : {list{"--numerics", "-1"}, list{"--warmup", "-1"}}) {
        list args = {"--job", "train_step"};
        args.insert(args.end(), negative.begin(), negative.end());
        try {
            parse(args);
            ADD_FAILURE() << negative[0] << " -1 accepted";
        } catch (const config_error& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.find("unrecognised"), std::string::npos) << what;
            EXPECT_NE(what.find(negative[0].substr(2)), std::string::npos) << what;
            EXPECT_NE(what.find("-1"), std::string::npos) << what;
        }
    }
    const auto* decl = jobs::find_decl(jobs::find_job("train_step").options(), "numerics");
    ASSERT_NE(decl, nullptr);
    EXPECT_EQ(jobs::describe_values(*decl), "(0 to 100000; alone: 200)"); // what --help shows
}
