// bench_history_rates: the change-point method's rates per kind of series (baseline x step),
// and its stated detectable step against the measured one.
#include "analysis/statistics/descriptive.hpp"
#include "tests/bench/history_rates.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ringscale::bench::history_rates {

using namespace ringscale::analysis::history;

namespace {

struct rates {
    std::int64_t series = 0, flagged = 0, found = 0, quiet = 0, quiet_found = 0, exact = 0;
    double pct(std::int64_t k, std::int64_t of) const {
        return of ? 100.0 * static_cast<double>(k) / static_cast<double>(of) : NAN;
    }
};

/// One kind: `count` series of baseline b with a step of `step` (0: A/A).
rates run_kind(baseline b, double step, std::int64_t count, std::int64_t n, change_options o,
               std::uint64_t seed) {
    analysis::splitmix64 rng(seed);
    rates r;
    for (std::int64_t i = 0; i < count; ++i) {
        shape s = draw_shape(rng, b, n);
        s.step = step;
        o.seed = rng.next();
        const auto cps = find_change_points(draw(rng, s, n), o);
        ++r.series;
        r.flagged += !cps.empty();
        bool hit = false, exact = false;
        for (const change_point& c : cps) {
            hit = hit || std::llabs(static_cast<long long>(c.index) - s.step_at) <= 1;
            exact = exact || static_cast<std::int64_t>(c.index) == s.step_at;
        }
        r.found += hit;
        r.exact += hit && exact;
        r.quiet += s.noise() <= 0.05;
        r.quiet_found += hit && s.noise() <= 0.05;
    }
    return r;
}

/// Detection rate of a step of `step` at the middle, over `count` series of `s`'s kind.
double detection(const shape& s0, double step, std::int64_t count, std::int64_t n, change_options o,
                 std::uint64_t seed) {
    analysis::splitmix64 rng(seed);
    std::int64_t hit = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        shape s = s0;
        s.step = step;
        s.step_at = n / 2;
        o.seed = rng.next();
        for (const change_point& c : find_change_points(draw(rng, s, n), o))
            if (std::llabs(static_cast<long long>(c.index) - n / 2) <= 1) {
                ++hit;
                break;
            }
    }
    return static_cast<double>(hit) / static_cast<double>(count);
}

} // namespace

const char* name_of(change_statistic s) {
    switch (s) {
    case change_statistic::capped:
        return "capped L1";
    case change_statistic::ranks:
        return "ranks, L1 split";
    case change_statistic::ranks_only:
        return "ranks (exp. 2)";
    case change_statistic::levels:
        return "levels (exp. 2)";
    case change_statistic::energy1:
        return "energy (exp. 1)";
    default:
        return "cleaned (exp. 2)";
    }
}

bool kinds_table(const std::vector<change_statistic>& methods, std::int64_t count, std::int64_t n,
                 std::uint64_t seed) {
    bool ok = true;
    std::int64_t found_all = 0, exact_all = 0;
    for (const change_statistic stat : methods) {
        change_options o;
        o.statistic = stat;
        for (int b = 0; b < 3; ++b) {
            const std::uint64_t s = seed * 1000 + static_cast<std::uint64_t>(b) * 10;
            const rates aa = run_kind(baseline(b), 0, count, n, o, s);
            const rates r12 = run_kind(baseline(b), 0.2, count, n, o, s + 1);
            const rates r2 = run_kind(baseline(b), 1, count, n, o, s + 2);
            const rates r20 = run_kind(baseline(b), 19, count, n, o, s + 3);
            std::printf("| %s | %s | %.1f%% | %.1f%% (%.1f%% of %lld) | %.1f%% | %.1f%% | "
                        "%.1f%% / %.1f%% / %.1f%% |\n",
                        name_of(stat), baseline_names[b], aa.pct(aa.flagged, aa.series),
                        r12.pct(r12.found, r12.series), r12.pct(r12.quiet_found, r12.quiet),
                        static_cast<long long>(r12.quiet), r2.pct(r2.found, r2.series),
                        r20.pct(r20.found, r20.series), r12.pct(r12.exact, r12.found),
                        r2.pct(r2.exact, r2.found), r20.pct(r20.exact, r20.found));
            if (stat != methods.front())
                continue;
            ok = ok && aa.flagged * 20 <= aa.series && r2.found * 10 >= 9 * r2.series &&
                 r20.found * 10 >= 9 * r20.series && r12.quiet_found * 10 >= 8 * r12.quiet;
            for (const rates* r : {&r12, &r2, &r20}) {
                found_all += r->found;
                exact_all += r->exact;
            }
        }
    }
    std::printf("\n%s: %lld of %lld steps found (all kinds) at their exact "
                "launch (%.1f%%)\n",
                name_of(methods.front()), static_cast<long long>(exact_all),
                static_cast<long long>(found_all),
                100.0 * static_cast<double>(exact_all) / static_cast<double>(found_all));
    return ok && exact_all * 10 >= 9 * found_all;
}

bool detectable_table(change_statistic stat, std::int64_t count, std::uint64_t seed) {
    struct config {
        std::int64_t n;
        shape s;
    };
    const std::vector<config> configs = {
        {14, {baseline::steady, 0.02}},
        {30, {baseline::steady, 0.02}},
        {30, {baseline::steady, 0.05}},
        {60, {baseline::steady, 0.05}},
        {30, {baseline::bimodal, 0.02, 1.3, 0.4}},
        {30, {baseline::spike, 0.03, 1, 0, 5, 7}},
    };
    bool ok = true;
    for (const config& c : configs) {
        change_options o;
        o.statistic = stat;
        analysis::splitmix64 rng(seed ^ static_cast<std::uint64_t>(c.n));
        std::vector<double> stated;
        for (std::int64_t i = 0; i < count / 4; ++i) {
            o.seed = rng.next();
            const auto x = draw(rng, c.s, c.n);
            stated.push_back(detectable_step(x, find_change_points(x, o), o));
        }
        const double said = analysis::median(stated);
        double lo = std::log1p(o.min_effect), hi = std::log(100.0);
        for (int i = 0; i < 9; ++i) {
            const double mid = (lo + hi) / 2;
            (detection(c.s, std::expm1(mid), count, c.n, o, seed + 7) >= 0.9 ? hi : lo) = mid;
        }
        const double measured = std::expm1(hi), off = said / measured - 1;
        const bool good = std::abs(off) <= 0.25;
        ok = ok && good;
        std::printf("| %s | %lld | %s, CV %.0f%% | %.1f%% | %.1f%% | %+.0f%% %s |\n", name_of(stat),
                    static_cast<long long>(c.n), baseline_names[int(c.s.base)], 100 * c.s.cv,
                    100 * said, 100 * measured, 100 * off, good ? "" : "(> 25%)");
    }
    return ok;
}

} // namespace ringscale::bench::history_rates
