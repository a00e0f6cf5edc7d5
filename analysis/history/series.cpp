#include "series.hpp"

#include "cpu_time.hpp"
#include "records.hpp"
#include "verdict.hpp"

#include "analysis/cases/cases.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <unordered_map>

namespace ringscale::analysis::history {

namespace {

std::string env_of(const launch_record& l, const std::vector<std::string>& keys) {
    std::vector<std::string> parts;
    for (const std::string& k : keys) {
        const std::string name = k.rfind("label:", 0) == 0 ? "label." + k.substr(6) : k;
        const auto it = l.meta.find(name);
        parts.push_back(it == l.meta.end() || it->second.empty() ? "-" : it->second);
    }
    return fmt::format("{}", fmt::join(parts, " | "));
}

/// The launches that can be placed, in series order; the others counted in `notes`.
std::vector<const launch_record*> ordered_launches(const index_contents& contents,
                                                   const series_options& opt,
                                                   std::vector<std::string>& notes,
                                                   std::vector<std::string>& unmatched) {
    std::map<std::string, std::size_t> position;
    for (std::size_t i = 0; i < opt.commits.size(); ++i)
        position.emplace(opt.commits[i], i);
    std::vector<const launch_record*> out;
    std::size_t unlabelled = 0;
    std::vector<std::string> unknown;
    std::vector<std::string> partial;
    for (const launch_record& l : contents.launches) {
        if (!l.complete) { // stopped before its end (a limit, a signal): never a launch
            partial.push_back(l.path);
            continue;
        }
        if (l.time_s > opt.now_s + 86400) {
            notes.push_back(fmt::format("{} is dated in the future ({} UTC): left out of every "
                                        "series",
                                        l.path, format_utc(l.time_s)));
            continue;
        }
        if (!opt.order_label.empty()) {
            const auto labels = l.labels();
            const auto it = labels.find(opt.order_label);
            if (it == labels.end()) {
                ++unlabelled;
                continue;
            }
            if (!opt.commits.empty() && !position.count(it->second)) {
                if (std::find(unknown.begin(), unknown.end(), it->second) == unknown.end())
                    unknown.push_back(it->second);
                continue;
            }
        }
        out.push_back(&l);
    }
    if (!partial.empty())
        notes.push_back(fmt::format("{} partial launch(es) (stopped before their end, "
                                    "complete=0) left out of every series: {}{}",
                                    partial.size(), partial.front(),
                                    partial.size() > 1 ? " and others" : ""));
    if (unlabelled)
        notes.push_back(fmt::format("{} launch(es) without the label '{}': left out", unlabelled,
                                    opt.order_label));
    if (unlabelled && out.empty() && unknown.empty())
        unmatched.push_back(fmt::format("--order label:{} matches no launch", opt.order_label));
    if (!unknown.empty())
        notes.push_back(fmt::format(
            "{} value(s) of label '{}' not in --commits ({}{}): their "
            "launches are left out",
            unknown.size(), opt.order_label,
            fmt::join(unknown.begin(),
                      unknown.begin() +
                          std::min<std::ptrdiff_t>(3, static_cast<std::ptrdiff_t>(unknown.size())),
                      ", "),
            unknown.size() > 3 ? ", ..." : ""));
    auto order_value = [&](const launch_record* l) { return l->labels()[opt.order_label]; };
    std::stable_sort(out.begin(), out.end(), [&](const launch_record* a, const launch_record* b) {
        if (!opt.order_label.empty()) {
            const std::string va = order_value(a), vb = order_value(b);
            if (!opt.commits.empty() && position[va] != position[vb])
                return position[va] < position[vb];
            if (opt.commits.empty() && va != vb)
                return text_less(va, vb);
        }
        return a->time_s != b->time_s ? a->time_s < b->time_s : a->launch < b->launch;
    });
    return out;
}

double median_of(const std::vector<series_point>& pts, std::size_t a, std::size_t b,
                 double launch_case::*field) {
    std::vector<double> v;
    for (std::size_t i = a; i < b; ++i)
        if (!std::isnan(pts[i].c->*field))
            v.push_back(pts[i].c->*field);
    return v.empty() ? std::nan("") : median(v);
}

/// Which phase carried the step change (the largest move in its direction, at least half of
/// it), or why none is named.
std::string moved_phase(const found_change& f) {
    const double step = f.after.value - f.before.value;
    const phase_shift* best = nullptr;
    for (const phase_shift& p : f.phases)
        if (p.phase != "memory" && !std::isnan(p.after - p.before) &&
            (!best || std::abs(p.after - p.before) > std::abs(best->after - best->before)))
            best = &p;
    if (!best)
        return "unknown (no phases recorded)";
    const double d = best->after - best->before;
    if (d * step <= 0 || std::abs(d) < 0.5 * std::abs(step))
        return "spread over phases";
    return best->phase;
}

/// The median of the step medians of points [a, b), marked launches included, and its CI.
estimate step_median(const series& s, std::size_t a, std::size_t b) {
    std::vector<double> v;
    for (std::size_t i = a; i < b; ++i)
        v.push_back(s.points[i].c->step_s);
    std::sort(v.begin(), v.end());
    return median_ci_sorted(v);
}

found_change describe_change(const series& s, std::size_t lo, std::size_t at, std::size_t hi,
                             double p) {
    found_change f;
    f.index = at;
    f.p = p;
    f.before = step_median(s, lo, at);
    f.after = step_median(s, at, hi);
    const std::pair<const char*, double launch_case::*> fields[] = {
        {"compute", &launch_case::compute_s},
        {"communication", &launch_case::comm_s},
        {"wait", &launch_case::wait_s},
        {"memory", &launch_case::memory_bytes}};
    for (const auto& [name, field] : fields)
        f.phases.push_back(
            {name, median_of(s.points, lo, at, field), median_of(s.points, at, hi, field)});
    f.moved = moved_phase(f);
    return f;
}

void analyse(series& s, const change_options& base) {
    std::vector<double> x;
    for (const series_point& p : s.points)
        x.push_back(p.c->step_s);
    change_options opt = base;
    opt.seed = base.seed ^ fnv1a64(s.key);
    const auto cps = find_change_points(x, opt);
    s.noise = launch_noise(x);
    for (std::size_t i = 0; i < cps.size(); ++i) {
        const std::size_t lo = i == 0 ? 0 : cps[i - 1].index;
        const std::size_t hi = i + 1 < cps.size() ? cps[i + 1].index : x.size();
        s.changes.push_back(describe_change(s, lo, cps[i].index, hi, cps[i].p));
        s.changes.back().with = moved_with(s, lo, cps[i].index, hi);
        found_change& f = s.changes.back();
        f.verdict = judged_on_cpu(s, lo, hi)
                        ? judge_cpu_change(s, lo, cps[i].index, hi, opt, f.cpu_change)
                        : judge_change(s, lo, cps[i].index, hi, opt);
    }
    s.detectable = detectable_step(x, cps, opt);
}

} // namespace

series_set build_series(const index_contents& contents, const series_options& opt) {
    series_set out;
    const auto launches = ordered_launches(contents, opt, out.notes, out.unmatched);
    std::unordered_map<std::string, std::vector<const launch_case*>> by_launch;
    for (const launch_case& c : contents.cases)
        by_launch[c.launch].push_back(&c);
    std::map<std::string, series> all;
    for (const launch_record* l : launches) {
        const std::string env = env_of(*l, opt.env_keys);
        for (const launch_case* c : by_launch[l->launch]) {
            series& s = all[c->key + "\n" + env];
            if (s.key.empty()) {
                s.key = c->key + "\n" + env;
                const auto nodes = c->key.find("|nodes=");
                s.label =
                    c->label +
                    (nodes == std::string::npos
                         ? ""
                         : " " + c->key.substr(nodes + 1, c->key.find('|', nodes + 1) - nodes - 1));
                s.env = env;
            }
            if (c->machine.empty() || !opt.skip_marked)
                s.points.push_back({l, c});
            if (c->machine.empty())
                continue;
            ++(opt.skip_marked ? s.skipped : s.marked);
            if (s.first_mark.empty())
                s.first_mark = mark_text_of(c->machine);
        }
    }
    // One line for every series with marked launches (a night of a busy machine marks them
    // all): how many series and launches, and the first series' first mark.
    std::size_t marked_series = 0, marked_launches = 0;
    std::string first;
    // The run's alpha split over the series it judges: a night of 56 A/A series then raises a
    // false change on at most alpha of nights, not on 1 - (1 - alpha)^56 of them.
    change_options per_run = opt.change;
    per_run.family = 0;
    for (const auto& [key, s] : all)
        per_run.family += s.points.size() >= 2 * std::max<std::size_t>(1, opt.change.min_segment);
    per_run.family = std::max<std::size_t>(1, per_run.family);
    out.family = per_run.family;
    for (auto& [key, s] : all) {
        analyse(s, per_run);
        if (s.marked || s.skipped) {
            ++marked_series;
            marked_launches += s.marked + s.skipped;
            if (first.empty())
                first = fmt::format("{}, in {} [{}]", s.first_mark, s.label, s.env);
        }
        out.all.push_back(std::move(s));
    }
    if (marked_series)
        out.notes.push_back(
            fmt::format("{} series: {} launch(es) measured on a marked machine {} (first: {})",
                        marked_series, marked_launches,
                        opt.skip_marked ? "left out (--skip-marked)"
                                        : "kept, their marks weighed by the decision rule",
                        first));
    return out;
}

std::string found_change::verdict_line() const {
    if (std::isnan(cpu_change))
        return verdict_text(verdict);
    return fmt::format("{} (judged on CPU time: wall time contended; CPU time {:+.1f}%)",
                       verdict_text(verdict), 100 * cpu_change);
}

std::vector<series_segment> segments_of(const series& s) {
    std::vector<std::size_t> cuts;
    for (const found_change& c : s.changes)
        if (c.index > 0 && c.index < s.points.size())
            cuts.push_back(c.index);
    std::sort(cuts.begin(), cuts.end());
    cuts.push_back(s.points.size());
    std::vector<series_segment> out;
    std::size_t begin = 0;
    for (const std::size_t end : cuts) {
        if (end <= begin)
            continue;
        out.push_back({begin, end, step_median(s, begin, end)});
        begin = end;
    }
    return out;
}

std::string labels_text(const launch_record& l) {
    std::string out;
    for (const auto& [k, v] : l.labels())
        out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

} // namespace ringscale::analysis::history
