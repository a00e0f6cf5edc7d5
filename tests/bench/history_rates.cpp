// bench_history_rates: the change-point method's rates on launch medians drawn directly (no
// results files: seconds), per kind of series, for the method and the other statistics of
// change_statistic. A kind is a baseline and a step:
//   baselines: steady (log-normal launches, CV drawn 2-10%); bimodal (each launch on the upper
//   of two levels, 1.15-1.6x apart, with a probability drawn 0.2-0.5); spike (steady, and one
//   launch 1.5-10x slower at a random place);
//   steps: none (A/A), x1.2, x2, x20, at a launch drawn from 5 .. L-5.
// Per kind: series flagged (A/A: any change point), steps found (a change within one launch of
// the step), found where the launch-to-launch CV is at most 5% (bimodal: the levels count in
// the CV), and found at the exact launch. Then `detectable`: per configuration (launches, CV,
// baseline), the median stated detectable_step of A/A series against the step at the middle
// at which the measured detection rate reaches 90% (bisection, common random numbers).
//
// usage: bench_history_rates [--series S] [--launches L] [--methods capped|ranks|all]
//                            [--seed K] [--power-series P]
// (defaults 200, 30, capped, 1, 200; P: series a bisection step of the detectable table, P/4
// A/A series for the stated step). Exit 1 when the method (the first listed) misses one of
// its goals: A/A flagged <= 5% in every kind, >= 90% of x2 steps found, >= 80% of x1.2
// steps where the CV is <= 5%, >= 90% of the steps found at their exact launch, stated
// detectable within 25% of the measured 90% point (ctest history_rates: --power-series 60);
// and the small series' goals (small_series below).
#include "tests/bench/history_rates.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

using namespace ringscale;
using namespace ringscale::bench::history_rates;
using ringscale::analysis::history::change_statistic;

namespace {

struct options {
    std::int64_t count = 0, n = 0, power = 0;
    std::uint64_t seed = 0;
    std::vector<change_statistic> methods;
};

/// The command line, checked; throws config_error with the usage or the ranges.
options parse_options(int argc, char** argv) {
    std::map<std::string, std::string> opt = {{"--series", "200"},
                                              {"--launches", "30"},
                                              {"--methods", "capped"},
                                              {"--seed", "1"},
                                              {"--power-series", "200"}};
    for (int i = 1; i + 1 < argc; i += 2)
        opt[argv[i]] = argv[i + 1];
    if (argc % 2 == 0 || opt.size() != 5 ||
        (opt["--methods"] != "ranks" && opt["--methods"] != "capped" && opt["--methods"] != "all"))
        throw config_error("usage: bench_history_rates [--series S] [--launches L] "
                           "[--methods capped|ranks|all] [--seed K] [--power-series P]");
    options o;
    o.count = parse_int(opt["--series"], "--series");
    o.n = parse_int(opt["--launches"], "--launches");
    o.seed = static_cast<std::uint64_t>(parse_int(opt["--seed"], "--seed"));
    o.power = parse_int(opt["--power-series"], "--power-series");
    if (o.count < 20 || o.count > 100000 || o.n < 14 || o.n > 10000 || o.power < 20 ||
        o.power > 100000)
        throw config_error("bench_history_rates: --series and --power-series 20 to 100000, "
                           "--launches 14 to 10000");
    o.methods = {change_statistic::capped};
    if (opt["--methods"] == "ranks")
        o.methods = {change_statistic::ranks};
    if (opt["--methods"] == "all")
        o.methods = {change_statistic::capped,     change_statistic::ranks,
                     change_statistic::ranks_only, change_statistic::levels,
                     change_statistic::energy1,    change_statistic::cleaned};
    return o;
}

} // namespace

int main(int argc, char** argv) {
    try {
        const options o = parse_options(argc, argv);
        std::printf(
            "%lld series a kind, %lld launches, seed %llu\n\n"
            "| method | baseline | A/A flagged | x1.2 found (CV <= 5%%) | x2 found | "
            "x20 found | exact, of found (x1.2 / x2 / x20) |\n|---|---|---|---|---|---|---|\n",
            static_cast<long long>(o.count), static_cast<long long>(o.n),
            static_cast<unsigned long long>(o.seed));
        bool ok = kinds_table(o.methods, o.count, o.n, o.seed);
        std::printf("\n| method | launches | baseline | stated detectable (median) | measured 90%% "
                    "point | stated off by |\n|---|---|---|---|---|---|\n");
        for (const change_statistic stat : o.methods)
            if (!detectable_table(stat, o.power, o.seed) && stat == o.methods.front())
                ok = false;
        if (!small_series(o.seed))
            ok = false;
        if (!ok)
            std::printf("FAILED: one of the goals is missed (%s)\n", name_of(o.methods.front()));
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_history_rates: %s\n", e.what());
        return 2;
    }
}
