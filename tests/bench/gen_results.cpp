// bench_gen_results: writes synthetic ringscale/1 files with the test fixture, for the
// ringscale-stats CLI test and the 1,000-file benchmark (tests/bench/stats_scale.sh).
//
// usage: bench_gen_results --out DIR [--files N] [--samples S] [--ps 1,2,4,8]
//                          [--slowdown F] [--seed K] [--seq-len L] [--noise SIGMA]
//                          [--gpu NAME]
// File i holds one case at P = ps[i % len(ps)] with S / P measured iterations (S samples).
// --gpu NAME: the cases ran on a CUDA device called NAME (/meta device_name) in bf16.
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

int main(int argc, char** argv) {
    try {
        std::map<std::string, std::string> opt = {
            {"--files", "1"}, {"--samples", "1000"}, {"--ps", "1,2,4,8"}, {"--slowdown", "0"},
            {"--seed", "1"},  {"--seq-len", "4096"}, {"--noise", "0.03"}};
        for (int i = 1; i + 1 < argc; i += 2)
            opt[argv[i]] = argv[i + 1];
        if (!opt.count("--out") || argc % 2 == 0)
            throw config_error("usage: bench_gen_results --out DIR [--files N] [--samples S] "
                               "[--ps 1,2,4] [--slowdown F] [--seed K] [--seq-len L] [--noise S] "
                               "[--gpu NAME]");
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
