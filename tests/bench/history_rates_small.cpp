// bench_history_rates: small series (6 to 10 launches), alone and in nights of 56, and the
// documented smallest launches per alpha.
#include "analysis/history/robust_levels.hpp"
#include "analysis/history/small_sample.hpp"
#include "analysis/history/verdict.hpp"
#include "tests/bench/history_rates.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace ringscale::bench::history_rates {

using namespace ringscale::analysis::history;

namespace {

/// Whether a night of `per_night` A/A series of n launches raises a false regression: the
/// newest change of a series slower by more than min_effect.
bool false_night(analysis::splitmix64& rng, const shape& steady, std::int64_t n,
                 std::int64_t per_night, change_options o) {
    bool bad = false;
    for (std::int64_t i = 0; i < per_night; ++i) {
        o.seed = rng.next();
        const auto x = draw(rng, steady, n);
        const auto cps = find_change_points(x, o);
        if (cps.empty())
            continue;
        const std::size_t at = cps.back().index,
                          from = cps.size() > 1 ? cps[cps.size() - 2].index : 0;
        bad = bad || median_of(x, at, x.size()) > (1 + o.min_effect) * median_of(x, from, at);
    }
    return bad;
}

/// 2x steps in `count` series at a split drawn from those leaving min_segment launches on each
/// side: found within one launch, not decided, and judged although missed.
struct step_rates {
    std::int64_t found = 0, undecided = 0, silent = 0;
};

step_rates steps_2x(analysis::splitmix64& rng, const shape& steady, std::int64_t n,
                    std::int64_t count, change_options o) {
    step_rates r;
    for (std::int64_t i = 0; i < count; ++i) {
        shape s = steady;
        s.step = 1;
        s.step_at = 3 + static_cast<std::int64_t>(rng.index(static_cast<std::size_t>(n - 5)));
        o.seed = rng.next();
        const auto x = draw(rng, s, n);
        const auto cps = find_change_points(x, o);
        bool hit = false;
        for (const change_point& c : cps)
            hit = hit || std::llabs(static_cast<long long>(c.index) - s.step_at) <= 1;
        const bool decided =
            too_few_launches(static_cast<std::size_t>(n), detectable_step(x, cps, o), o).empty();
        r.found += hit;
        r.undecided += !decided;
        r.silent += decided && !hit;
    }
    return r;
}

double pct(std::int64_t k, std::int64_t of) {
    return 100.0 * static_cast<double>(k) / static_cast<double>(of);
}

/// The documented smallest launches per alpha (analysis/README.md, min_segment 3), one series
/// alone and each of a night of 56.
bool documented_launches() {
    bool doc = true;
    const std::size_t table[][4] = {{6, 8, 6, 25}, {6, 12, 6, 42}, {6, 24, 89, 89}};
    const double alphas[] = {0.05, 0.01, 0.001};
    for (int i = 0; i < 3; ++i) {
        const std::size_t got[4] = {
            smallest_launches(alphas[i], 3), permutation_reach(alphas[i], 3),
            smallest_launches(alphas[i] / 56, 3), permutation_reach(alphas[i] / 56, 3)};
        std::printf("smallest launches at alpha %g: one series %zu (the permutation test alone "
                    "%zu), each of 56 %zu (%zu)%s\n",
                    alphas[i], got[0], got[1], got[2], got[3],
                    std::equal(got, got + 4, table[i]) ? "" : " (not as documented)");
        doc = doc && std::equal(got, got + 4, table[i]);
    }
    return doc;
}

} // namespace

/// Small series (6 to 10 launches, steady, CV 2% and 10%), one series alone (alpha 0.01) and
/// in a night of 56 (alpha 0.01 over the night, history's split: each series at 0.01 / 56):
/// A/A series flagged alone (at most 2.5%); nights of 56 A/A series with a false regression,
/// each series at 0.01 (40 nights, shown: the rate the split mends) and at the night's split
/// (at most 5% of 100 nights); 2x steps found, or their series not decided, never judged past a
/// missed one (0 of 200), alone and in the night. Also the documented smallest launches per alpha.
bool small_series(std::uint64_t seed) {
    std::printf("\n| launches | CV | A/A flagged | nights of 56 with a false regression: alpha "
                "per series / per night | 2x found | 2x not decided | 2x judged, missed | "
                "in a night of 56: 2x found / not decided / judged, missed |\n"
                "|---|---|---|---|---|---|---|---|\n");
    bool ok = true;
    constexpr std::int64_t count = 200, nights = 100, per_night = 56, nights_alone = 40;
    for (std::int64_t n = 6; n <= 10; ++n)
        for (const double cv : {0.02, 0.10}) {
            // One series alone draws as it did before the night's split (the same series);
            // the nights of 56 at the split draw from their own stream.
            const std::uint64_t stream = seed * 7919 + static_cast<std::uint64_t>(n * 100) +
                                         static_cast<std::uint64_t>(cv * 1000);
            analysis::splitmix64 rng(stream), night_rng(stream ^ 0x6e6967687473ULL);
            change_options o, night = o;
            night.family = per_night;
            const shape steady{baseline::steady, cv};
            std::int64_t flagged = 0, bad_series = 0, bad_nights = 0;
            for (std::int64_t i = 0; i < count; ++i) {
                o.seed = rng.next();
                flagged += !find_change_points(draw(rng, steady, n), o).empty();
            }
            for (std::int64_t k = 0; k < nights_alone; ++k)
                bad_series += false_night(rng, steady, n, per_night, o);
            const step_rates alone = steps_2x(rng, steady, n, count, o);
            for (std::int64_t k = 0; k < nights; ++k)
                bad_nights += false_night(night_rng, steady, n, per_night, night);
            const step_rates in_night = steps_2x(night_rng, steady, n, count, night);
            const bool good = flagged * 40 <= count && bad_nights * 20 <= nights &&
                              alone.silent == 0 && in_night.silent == 0;
            ok = ok && good;
            std::printf(
                "| %lld | %.0f%% | %.1f%% | %lld of %lld / %lld of %lld | %.1f%% | %.1f%% | "
                "%lld | %.1f%% / %.1f%% / %lld |%s\n",
                static_cast<long long>(n), 100 * cv, pct(flagged, count),
                static_cast<long long>(bad_series), static_cast<long long>(nights_alone),
                static_cast<long long>(bad_nights), static_cast<long long>(nights),
                pct(alone.found, count), pct(alone.undecided, count),
                static_cast<long long>(alone.silent), pct(in_night.found, count),
                pct(in_night.undecided, count), static_cast<long long>(in_night.silent),
                good ? "" : " (missed)");
        }
    return documented_launches() && ok;
}

} // namespace ringscale::bench::history_rates
