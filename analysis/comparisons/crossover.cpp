#include "crossover.hpp"

#include "analysis/cases/case_decision.hpp"
#include "analysis/presentation/views.hpp"
#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/hierarchical.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace ringscale::analysis {

namespace {

bool by_launch(const pooled_case& a, const pooled_case& b, const crossover_options& opt) {
    const std::size_t need = std::max<std::size_t>(2, opt.min_launches);
    return a.launches.size() >= need && b.launches.size() >= need;
}

/// CI of t(slow) / t(fast): two-level (launches, then iterations) when both have enough
/// launches, else over iterations.
interval ratio_ci(const pooled_case& slow, const pooled_case& fast, const crossover_options& o) {
    auto ratio = [](double a, double b) { return a / b; };
    if (by_launch(slow, fast, o))
        return percentile_interval(two_level_replicates(launch_steps(slow.launches),
                                                        launch_steps(fast.launches), ratio,
                                                        o.replicates, o.seed),
                                   o.level);
    return bootstrap_two_sample(slow.steps(), fast.steps(), ratio, o.replicates, o.seed, o.level);
}

/// Verdict on "fast beats slow" given the CI of t(slow) / t(fast): the one decision rule
/// (analysis/statistics/decision.hpp) with the noise floor as its threshold. "slower" (the
/// slow one is slower beyond it) is a confirmed order; marks weigh by their effect.
decision_result verdict_of(const interval& ci, const pooled_case& slow, const pooled_case& fast,
                           const crossover_options& o, const noise_floor& floor) {
    decision_result d = decide_cases(fast, slow, ci, floor.fraction);
    if (d.verdict != decision::not_decided && !by_launch(slow, fast, o))
        d = {decision::not_decided, fmt::format("fewer than {} launches", o.min_launches), ""};
    return d;
}

/// The verdict's word in the tables: "confirmed", "tie", or "not decided (<why>)".
std::string verdict_word(const decision_result& d) {
    return d.verdict == decision::slower ? "confirmed" : verdict_text(d);
}

void crossings_of(const std::vector<const crossover_cell*>& along_s, const crossover_options& o,
                  const noise_floor& floor, crossover_result& out) {
    // along_s: one shape and P, ascending S. Every scheme pair measured at neighbouring S.
    for (std::size_t i = 0; i + 1 < along_s.size(); ++i) {
        const crossover_cell& a = *along_s[i];
        const crossover_cell& b = *along_s[i + 1];
        for (const scheme_point& x : a.schemes)
            for (const scheme_point& y : a.schemes) {
                if (x.scheme >= y.scheme)
                    continue;
                auto find = [&](const std::string& name) -> const scheme_point* {
                    for (const scheme_point& p : b.schemes)
                        if (p.scheme == name)
                            return &p;
                    return nullptr;
                };
                const scheme_point* x2 = find(x.scheme);
                const scheme_point* y2 = find(y.scheme);
                if (!x2 || !y2)
                    continue;
                const double d1 = std::log(x.median_s / y.median_s);
                const double d2 = std::log(x2->median_s / y2->median_s);
                if (!(d1 * d2 < 0))
                    continue;
                const double l1 = std::log(a.seq_len), l2 = std::log(b.seq_len);
                crossover_point p;
                p.shape = a.shape;
                p.world_size = a.world_size;
                p.faster_below = d1 < 0 ? x.scheme : y.scheme;
                p.faster_above = d1 < 0 ? y.scheme : x.scheme;
                p.s_below = a.seq_len;
                p.s_above = b.seq_len;
                p.boundary = std::exp(l1 + (l2 - l1) * d1 / (d1 - d2));
                // Below: faster_below wins; above: faster_above wins.
                const scheme_point& win_lo = d1 < 0 ? x : y;
                const scheme_point& lose_lo = d1 < 0 ? y : x;
                const scheme_point& win_hi = d1 < 0 ? *y2 : *x2;
                const scheme_point& lose_hi = d1 < 0 ? *x2 : *y2;
                const interval lo = ratio_ci(*lose_lo.source, *win_lo.source, o);
                const interval hi = ratio_ci(*lose_hi.source, *win_hi.source, o);
                p.ratio_below_lo = lo.lo;
                p.ratio_below_hi = lo.hi;
                p.ratio_above_lo = hi.lo;
                p.ratio_above_hi = hi.hi;
                // Confirmed only when the rule orders the schemes at both ends.
                const decision_result v1 =
                    verdict_of(lo, *lose_lo.source, *win_lo.source, o, floor);
                const decision_result v2 =
                    verdict_of(hi, *lose_hi.source, *win_hi.source, o, floor);
                p.confirmed = v1.verdict == decision::slower && v2.verdict == decision::slower;
                p.verdict = v1.verdict != decision::slower ? verdict_word(v1) : verdict_word(v2);
                out.crossings.push_back(p);
            }
    }
}

} // namespace

noise_floor between_case_noise(const std::vector<crossover_cell>& cells, double min_floor) {
    noise_floor out{min_floor, fmt::format("the least floor, {:g}%", 100 * min_floor)};
    std::vector<double> spreads; // slowest / fastest - 1 of each group of identical work
    for (const crossover_cell& c : cells) {
        if (!c.same_work)
            continue;
        std::map<std::string, std::pair<double, double>> by_work; // work -> (fastest, slowest)
        std::map<std::string, int> count;
        for (const scheme_point& s : c.schemes) {
            auto [it, first] = by_work.try_emplace(s.work, s.median_s, s.median_s);
            it->second.first = std::min(it->second.first, s.median_s);
            it->second.second = std::max(it->second.second, s.median_s);
            ++count[s.work];
        }
        for (const auto& [work, range] : by_work)
            if (count[work] >= 2 && range.first > 0)
                spreads.push_back(range.second / range.first - 1);
    }
    if (spreads.empty())
        return out;
    const std::size_t n = spreads.size();
    const double typical = median_inplace(spreads); // one disturbed cell does not set it
    if (typical > out.fraction)
        out = {typical, fmt::format("identical work (layouts of one scheme at P=1) differed by "
                                    "{:.1f}%, the median of {} pair(s)",
                                    100 * typical, n)};
    return out;
}

crossover_result find_crossovers(const std::vector<pooled_case>& pooled,
                                 const crossover_options& opt) {
    crossover_result out;
    std::vector<crossover_cell> cells = scheme_cells(pooled);
    out.floor = between_case_noise(cells, opt.min_floor);
    for (crossover_cell& cell : cells) {
        if (cell.schemes.size() < 2)
            continue;
        const scheme_point& best = cell.schemes[0];
        const scheme_point& next = cell.schemes[1];
        cell.margin = next.median_s / best.median_s - 1;
        const interval ci = ratio_ci(*next.source, *best.source, opt);
        cell.margin_lo = ci.lo - 1;
        cell.margin_hi = ci.hi - 1;
        cell.verdict =
            cell.same_work
                ? "same work (P=1)"
                : verdict_word(verdict_of(ci, *next.source, *best.source, opt, out.floor));
        out.cells.push_back(std::move(cell));
    }
    // Cells are ordered by (shape, P, S): group runs of equal shape and P. At P=1 the schemes
    // do identical work: they cannot cross.
    for (std::size_t i = 0; i < out.cells.size();) {
        std::vector<const crossover_cell*> run;
        std::size_t j = i;
        for (; j < out.cells.size() && out.cells[j].shape == out.cells[i].shape &&
               out.cells[j].world_size == out.cells[i].world_size;
             ++j)
            run.push_back(&out.cells[j]);
        if (!out.cells[i].same_work)
            crossings_of(run, opt, out.floor, out);
        i = j;
    }
    return out;
}

table crossover_cell_table(const crossover_result& r) {
    table t;
    const char* cols[][2] = {{"shape", "shape"},
                             {"S", "seq_len"},
                             {"P", "world_size"},
                             {"fastest", "fastest"},
                             {"median", "median_s"},
                             {"runner-up", "runner_up"},
                             {"margin %", "margin_pct"},
                             {"95% CI", "margin_lo_pct"},
                             {"", "margin_hi_pct"},
                             {"verdict", "verdict"},
                             {"peak MiB/rank", "fastest_peak_mib"},
                             {"least memory", "least_memory"},
                             {"its peak MiB/rank", "least_memory_peak_mib"}};
    for (const auto& c : cols)
        t.add_column(c[0], c[1], c[0][0] == '\0');
    for (const crossover_cell& c : r.cells) {
        const scheme_point& best = c.schemes[0];
        const scheme_point& low = c.schemes[c.least_memory];
        t.rows.push_back(
            {text_cell(c.shape), cell{size_text(c.seq_len), c.seq_len}, int_cell(c.world_size),
             text_cell(best.scheme), number_cell(best.median_s, format_time(best.median_s)),
             text_cell(c.schemes[1].scheme),
             number_cell(100 * c.margin, fmt::format("{:.1f}", 100 * c.margin)),
             number_cell(100 * c.margin_lo,
                         fmt::format("[{:.1f}, {:.1f}]", 100 * c.margin_lo, 100 * c.margin_hi)),
             number_cell(100 * c.margin_hi, ""), text_cell(c.verdict), mib_cell(best.peak_bytes),
             text_cell(low.scheme), mib_cell(low.peak_bytes)});
    }
    return t;
}

table crossover_point_table(const crossover_result& r) {
    table t;
    const char* cols[][2] = {{"shape", "shape"},
                             {"P", "world_size"},
                             {"faster below", "faster_below"},
                             {"S below", "s_below"},
                             {"S above", "s_above"},
                             {"faster above", "faster_above"},
                             {"boundary S", "boundary"},
                             {"ratio below", "ratio_below_lo"},
                             {"", "ratio_below_hi"},
                             {"ratio above", "ratio_above_lo"},
                             {"", "ratio_above_hi"},
                             {"confirmed", "confirmed"}};
    for (const auto& c : cols)
        t.add_column(c[0], c[1], c[0][0] == '\0');
    auto ratio = [](double lo, double hi) {
        return number_cell(lo, fmt::format("[{:.3f}, {:.3f}]", lo, hi));
    };
    for (const crossover_point& p : r.crossings)
        t.rows.push_back(
            {text_cell(p.shape), int_cell(p.world_size), text_cell(p.faster_below),
             cell{size_text(p.s_below), p.s_below}, cell{size_text(p.s_above), p.s_above},
             text_cell(p.faster_above), number_cell(p.boundary, fmt::format("{:.0f}", p.boundary)),
             ratio(p.ratio_below_lo, p.ratio_below_hi), number_cell(p.ratio_below_hi, ""),
             ratio(p.ratio_above_lo, p.ratio_above_hi), number_cell(p.ratio_above_hi, ""),
             cell{p.confirmed ? std::string("yes") : "no (" + p.verdict + ")", p.confirmed}});
    return t;
}

} // namespace ringscale::analysis
