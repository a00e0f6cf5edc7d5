// bench_history_rates: the change-point method's false-alarm and detection rates over many
// seeds, on launch medians drawn directly (no results files: seconds, where
// tests/analysis/history_synthetic.sh takes minutes for one seed). The model is
// tests/bench/gen_history.cpp's: launch CV drawn from 2-10%, an outlier launch about 1 in 30
// (x1.3 to x2), every 10th series bimodal (levels 15% apart); a step of 3x the series' launch
// noise at a launch drawn from 5 .. L-5. A step counts as found within +-1 launch.
//
// usage: bench_history_rates [--seeds N] [--series S] [--launches L]   (defaults 20, 200, 30)
// Exit 1 when, over all seeds, more than 5% of steady series are flagged or fewer than 90% of
// the steps are found (ctest history_rates runs it with the defaults).
#include "analysis/history/change_points.hpp"
#include "analysis/statistics/bootstrap.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

using namespace ringscale;
using namespace ringscale::analysis::history;

namespace {

double uniform(analysis::splitmix64& rng) {
    return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
}

double normal(analysis::splitmix64& rng) {
    return std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
}

/// One series of `launches` launch medians; a step at `step_at` (none when negative).
std::vector<double> draw(analysis::splitmix64& rng, bool bimodal, double cv, double step,
                         std::int64_t launches, std::int64_t step_at) {
    std::vector<double> x;
    for (std::int64_t j = 0; j < launches; ++j) {
        double f = std::exp(cv * normal(rng));
        if (bimodal && uniform(rng) < 0.5)
            f *= 1.15;
        if (uniform(rng) < 1.0 / 30)
            f *= 1.3 + 0.7 * uniform(rng);
        if (step_at >= 0 && j >= step_at)
            f *= 1 + step;
        x.push_back(1e-3 * f);
    }
    return x;
}

} // namespace

int main(int argc, char** argv) {
    try {
        std::map<std::string, std::string> opt = {
            {"--seeds", "20"}, {"--series", "200"}, {"--launches", "30"}};
        for (int i = 1; i + 1 < argc; i += 2)
            opt[argv[i]] = argv[i + 1];
        if (argc % 2 == 0 || opt.size() != 3)
            throw config_error("usage: bench_history_rates [--seeds N] [--series S] "
                               "[--launches L]");
        const auto seeds = parse_int(opt["--seeds"], "--seeds");
        const auto series = parse_int(opt["--series"], "--series");
        const auto launches = parse_int(opt["--launches"], "--launches");
        if (seeds < 1 || series < 1 || launches < 12)
            throw config_error("bench_history_rates: --seeds and --series >= 1, --launches >= 12");
        std::int64_t flagged_all = 0, found_all = 0, short_seeds = 0, high_seeds = 0;
        for (std::int64_t s = 0; s < seeds; ++s) {
            analysis::splitmix64 rng(0x5eed0000 + static_cast<std::uint64_t>(s));
            std::int64_t flagged = 0, found = 0;
            for (std::int64_t i = 0; i < series; ++i) {
                const double cv = 0.02 + 0.08 * uniform(rng);
                const bool bimodal = i % 10 == 0;
                const double sd =
                    bimodal ? std::sqrt(cv * cv + std::pow(std::log(1.15) / 2, 2)) : cv;
                const auto at =
                    5 + static_cast<std::int64_t>(uniform(rng) * static_cast<double>(launches - 9));
                change_options o;
                o.seed = rng.next();
                flagged += !find_change_points(draw(rng, bimodal, cv, 0, launches, -1), o).empty();
                bool hit = false;
                for (const change_point& c :
                     find_change_points(draw(rng, bimodal, cv, 3 * sd, launches, at), o))
                    hit = hit || std::llabs(static_cast<long long>(c.index) - at) <= 1;
                found += hit;
            }
            const double f = 100.0 * static_cast<double>(flagged) / static_cast<double>(series);
            const double d = 100.0 * static_cast<double>(found) / static_cast<double>(series);
            std::printf("seed %lld: steady flagged %.1f%%, steps found %.1f%%\n",
                        static_cast<long long>(s), f, d);
            flagged_all += flagged;
            found_all += found;
            short_seeds += d < 90;
            high_seeds += f > 5;
        }
        const double n = static_cast<double>(seeds * series);
        std::printf("all %lld seeds x %lld series: steady flagged %.2f%%, planted 3x-noise steps "
                    "found within +-1 launch %.2f%%; seeds with steps found below 90%%: %lld, "
                    "with more than 5%% flagged: %lld\n",
                    static_cast<long long>(seeds), static_cast<long long>(series),
                    100.0 * static_cast<double>(flagged_all) / n,
                    100.0 * static_cast<double>(found_all) / n, static_cast<long long>(short_seeds),
                    static_cast<long long>(high_seeds));
        // Issue 37's goals over all seeds: at most 5% of steady series flagged, at least 90%
        // of the planted steps found (ctest history_rates runs the defaults).
        const bool ok = flagged_all * 20 <= seeds * series && found_all * 10 >= 9 * seeds * series;
        if (!ok)
            std::printf("FAILED: the goals are at most 5%% flagged and at least 90%% found\n");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_history_rates: %s\n", e.what());
        return 2;
    }
}
