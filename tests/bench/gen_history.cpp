// bench_gen_history: writes a history of synthetic ringscale/2 launches with the test fixture
// (one file per launch, one case per series), for the history tests and benchmark
// (tests/analysis/history_synthetic.sh, tests/bench/history.sh), and the truth it planted.
//
// usage: bench_gen_history --out DIR [--series N] [--launches L] [--first F] [--mode steady|step]
//                          [--seed K]
//        bench_gen_history --out DIR --from RECORDING   (launch_NNNNN.h5 from a recording)
//        bench_gen_history --record RESULTS_DIR          (a recording of real launches, stdout)
// (tests/analysis/recorded_history.hpp: a real history kept small as test data.)
// Series i has a launch-to-launch CV drawn from 2-10%, about 1 launch in 30 an outlier (x1.3 to
// x2), and series i % 10 == 0 are bimodal (each launch on one of two levels 15% apart). With
// --mode step, a step of 3x the series' launch noise is planted at a launch drawn from
// 5 .. L-5, in compute (even i) or communication (odd i). Launch j (from F) is dated j hours
// after 2025-01-01 and labelled commit=cJJJJJ. DIR/truth.csv: series,seq_len,step_at,phase,step.
#include "analysis/statistics/bootstrap.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "tests/analysis/analysis_fixture.hpp"
#include "tests/analysis/recorded_history.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

using namespace ringscale;

namespace {

struct planted {
    double cv = 0;
    bool bimodal = false;
    std::int64_t step_at = -1;
    bool comm = false;
    double step = 0;
};

double uniform(analysis::splitmix64& rng) {
    return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
}

double normal(analysis::splitmix64& rng) {
    return std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
}

planted plan(std::int64_t i, std::int64_t launches, bool step, std::uint64_t seed) {
    analysis::splitmix64 rng(seed * 7919 + static_cast<std::uint64_t>(i));
    planted p;
    p.cv = 0.02 + 0.08 * uniform(rng);
    p.bimodal = i % 10 == 0;
    // The noise of the launch medians: the CV and, for two modes, half their distance.
    const double sd = p.bimodal ? std::sqrt(p.cv * p.cv + std::pow(std::log(1.15) / 2, 2)) : p.cv;
    if (step) {
        p.step_at = 5 + static_cast<std::int64_t>(uniform(rng) * static_cast<double>(launches - 9));
        p.comm = i % 2 == 1;
        p.step = 3 * sd;
    }
    return p;
}

/// The case of series `i` in launch `j`: its time and phases.
test_fixture::fixture_case make_case(std::int64_t i, std::int64_t j, const planted& p,
                                     std::uint64_t seed) {
    analysis::splitmix64 rng(seed * 1000003 + static_cast<std::uint64_t>(i) * 100003 +
                             static_cast<std::uint64_t>(j));
    test_fixture::fixture_case c;
    c.world_size = 2;
    c.iterations = 5;
    c.warmup = 1;
    c.noise = 0.005;
    c.int_params = {{"seq_len", 1000 + i}};
    c.seed = rng.next();
    double factor = std::exp(p.cv * normal(rng));
    if (p.bimodal && uniform(rng) < 0.5)
        factor *= 1.15;
    if (uniform(rng) < 1.0 / 30)
        factor *= 1.3 + 0.7 * uniform(rng);
    c.base_time_s = 1e-3 * factor;
    c.comm_fraction = 0.3;
    if (p.step_at >= 0 && j >= p.step_at) {
        // Only the planted phase grows: the other keeps its seconds.
        c.comm_fraction = p.comm ? (0.3 + p.step) / (1 + p.step) : 0.3 / (1 + p.step);
        c.base_time_s *= 1 + p.step;
    }
    return c;
}

} // namespace

int main(int argc, char** argv) {
    try {
        std::map<std::string, std::string> opt = {{"--series", "20"},
                                                  {"--launches", "30"},
                                                  {"--first", "0"},
                                                  {"--mode", "steady"},
                                                  {"--seed", "1"}};
        for (int i = 1; i + 1 < argc; i += 2)
            opt[argv[i]] = argv[i + 1];
        if (opt.count("--record") && argc == 3) {
            test_fixture::record_history({opt["--record"]}, std::cout);
            return 0;
        }
        if (opt.count("--from") && opt.count("--out") && argc == 5) {
            std::ifstream in(opt["--from"]);
            if (!in)
                throw config_error("bench_gen_history: cannot read " + opt["--from"]);
            std::filesystem::create_directories(opt["--out"]);
            std::size_t j = 0;
            for (const test_fixture::fixture_file& f : test_fixture::replay_history(in))
                test_fixture::write_fixture_file(
                    fmt::format("{}/launch_{:05}.h5", opt["--out"], ++j), f);
            return 0;
        }
        if (!opt.count("--out") || argc % 2 == 0 ||
            (opt["--mode"] != "steady" && opt["--mode"] != "step"))
            throw config_error("usage: bench_gen_history --out DIR [--series N] [--launches L] "
                               "[--first F] [--mode steady|step] [--seed K]");
        const std::string out = opt["--out"];
        std::filesystem::create_directories(out);
        const auto series = parse_int(opt["--series"], "--series");
        const auto launches = parse_int(opt["--launches"], "--launches");
        const auto first = parse_int(opt["--first"], "--first");
        const auto seed = static_cast<std::uint64_t>(parse_int(opt["--seed"], "--seed"));
        const bool step = opt["--mode"] == "step";
        std::vector<planted> plans;
        std::ofstream truth(out + "/truth.csv");
        truth << "series,seq_len,step_at,phase,step\n";
        for (std::int64_t i = 0; i < series; ++i) {
            plans.push_back(plan(i, first + launches, step, seed));
            truth << fmt::format("{},{},{},{},{:.4f}\n", i, 1000 + i, plans.back().step_at,
                                 plans.back().comm ? "communication" : "compute",
                                 plans.back().step);
        }
        for (std::int64_t j = first; j < first + launches; ++j) {
            test_fixture::fixture_file f;
            const std::time_t t = 1735689600 + static_cast<std::time_t>(j) * 3600;
            std::tm tm{};
            gmtime_r(&t, &tm);
            char date[32];
            std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
            f.created_utc = date;
            f.launch_id = fmt::format("{:016x}{:016x}", seed, static_cast<std::uint64_t>(j));
            f.labels = {{"commit", fmt::format("c{:05}", j)}};
            for (std::int64_t i = 0; i < series; ++i)
                f.cases.push_back(make_case(i, j, plans[static_cast<std::size_t>(i)], seed));
            test_fixture::write_fixture_file(fmt::format("{}/launch_{:05}.h5", out, j), f);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gen_history: %s\n", e.what());
        return 2;
    }
}
