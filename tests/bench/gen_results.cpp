// bench_gen_results: writes synthetic ringscale/1 files with the test fixture, for the
// ringscale-stats CLI test and the 1,000-file benchmark (tests/bench/stats_scale.sh).
//
// usage: bench_gen_results --out DIR [--files N] [--samples S] [--ps 1,2,4,8]
//                          [--slowdown F] [--seed K] [--seq-len L] [--noise SIGMA]
//                          [--gpu NAME] [--study scaling|crossover]
// File i holds one case at P = ps[i % len(ps)] with S / P measured iterations (S samples).
// --gpu NAME: the cases ran on a CUDA device called NAME (/meta device_name) in bf16.
// --study crossover: file i is instead launch i of two attention schemes at P = 4 and
// S = 1K..16K (test_crossover's planted study): the all-gather wins at short S, the ring at
// long S, trading places between S = 4K and 8K (confirmed from --files 2 on).
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <string>

using namespace ringscale;

namespace {

/// Launch `launch` of the planted crossover: ring/zigzag (overlap on) against the all-gather.
test_fixture::fixture_file crossover_launch(std::int64_t launch, std::uint64_t seed) {
    test_fixture::fixture_file f;
    for (std::int64_t s : {1024, 2048, 4096, 8192, 16384}) {
        const double sd = static_cast<double>(s);
        for (bool ring : {true, false}) {
            test_fixture::fixture_case c;
            c.job = ring ? "ring_attention" : "context_parallel";
            c.variant = ring ? "ring/zigzag" : "allgather";
            c.text_params = {
                {"device", "cpu"}, {"comm", "mpi"}, {"dtype", "float32"}, {"layout", "zigzag"}};
            c.int_params = {{"seq_len", s}, {"heads", 8}};
            if (ring)
                c.text_params.emplace_back("overlap", "on");
            else
                c.int_params.emplace_back("ulysses_degree", 0);
            c.base_time_s = ring ? 2e-3 + 1e-10 * sd * sd : 0.5e-3 + 1.5e-10 * sd * sd;
            c.peak_host_bytes = ring ? 1u << 20 : 4u << 20;
            c.noise = 0.01;
            c.seed = seed * 1000003 + static_cast<std::uint64_t>(1000 * launch + s + ring);
            f.cases.push_back(c);
        }
    }
    f.git_commit = fmt::format("fixture{:04}", launch);
    return f;
}

} // namespace

int main(int argc, char** argv) {
    try {
        std::map<std::string, std::string> opt = {
            {"--files", "1"}, {"--samples", "1000"}, {"--ps", "1,2,4,8"}, {"--slowdown", "0"},
            {"--seed", "1"},  {"--seq-len", "4096"}, {"--noise", "0.03"}, {"--study", "scaling"}};
        for (int i = 1; i + 1 < argc; i += 2)
            opt[argv[i]] = argv[i + 1];
        if (!opt.count("--out") || argc % 2 == 0)
            throw config_error("usage: bench_gen_results --out DIR [--files N] [--samples S] "
                               "[--ps 1,2,4] [--slowdown F] [--seed K] [--seq-len L] [--noise S] "
                               "[--gpu NAME] [--study scaling|crossover]");
        if (opt["--study"] != "scaling" && opt["--study"] != "crossover")
            throw config_error("--study '" + opt["--study"] + "': expected scaling or crossover");
        const std::string out = opt["--out"];
        std::filesystem::create_directories(out);
        const auto files = parse_int(opt["--files"], "--files");
        const auto samples = parse_int(opt["--samples"], "--samples");
        const auto seed = static_cast<std::uint64_t>(parse_int(opt["--seed"], "--seed"));
        const double slowdown = parse_double(opt["--slowdown"], "--slowdown");
        std::vector<int> ps;
        for (const auto& p : split_list(opt["--ps"], "--ps"))
            ps.push_back(static_cast<int>(parse_int(p, "--ps")));
        for (std::int64_t i = 0; i < files; ++i) {
            if (opt["--study"] == "crossover") {
                test_fixture::write_fixture_file(fmt::format("{}/run_{:05}.h5", out, i),
                                                 crossover_launch(i, seed));
                continue;
            }
            test_fixture::fixture_case c;
            c.world_size = ps[static_cast<std::size_t>(i) % ps.size()];
            c.iterations = static_cast<int>(std::max<std::int64_t>(1, samples / c.world_size));
            c.warmup = 2;
            c.noise = parse_double(opt["--noise"], "--noise");
            // Amdahl-like strong scaling with 5% serial work, times in ms.
            c.base_time_s = 1e-3 * (1 + slowdown) * (0.05 + 0.95 / c.world_size);
            c.int_params = {{"seq_len", parse_int(opt["--seq-len"], "--seq-len")}};
            c.float_params = {{"flops_per_iter", 2e7}};
            c.seed = seed * 1000003 + static_cast<std::uint64_t>(i);
            test_fixture::fixture_file f;
            if (opt.count("--gpu")) {
                c.text_params = {{"device", "cuda"},
                                 {"comm", "nccl"},
                                 {"dtype", "bfloat16"},
                                 {"mfu_dtype", "bf16"}};
                f.device_name = opt["--gpu"];
            }
            f.cases = {c};
            test_fixture::write_fixture_file(fmt::format("{}/run_{:05}.h5", out, i), f);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gen_results: %s\n", e.what());
        return 2;
    }
}
