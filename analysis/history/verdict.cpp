#include "verdict.hpp"

#include "records.hpp"
#include "small_sample.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <limits>

namespace ringscale::analysis::history {

namespace {

bool marked(const series_point& p) {
    return !p.c->machine.empty();
}

/// The largest mark effect among launches [a, b) of s, with its reason (1, "" when none).
std::pair<double, std::string> largest_mark(const series& s, std::size_t a, std::size_t b) {
    std::pair<double, std::string> out{1, ""};
    for (std::size_t i = a; i < b; ++i)
        if (marked(s.points[i])) {
            const double e = mark_effect_of(s.points[i].c->machine);
            if (e > out.first || out.second.empty())
                out = {std::max(e, out.first), mark_text_of(s.points[i].c->machine)};
        }
    return out;
}

/// The smallest mark effect among launches [a, b) of s (1 when one of them is unmarked).
double least_mark(const series& s, std::size_t a, std::size_t b) {
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t i = a; i < b; ++i)
        least = std::min(least, marked(s.points[i]) ? mark_effect_of(s.points[i].c->machine) : 1);
    return std::isfinite(least) ? least : 1;
}

std::size_t marked_in(const series& s, std::size_t a, std::size_t b) {
    std::size_t n = 0;
    for (std::size_t i = a; i < b; ++i)
        n += marked(s.points[i]);
    return n;
}

std::string meta_of(const launch_record& l, const std::string& key) {
    if (key == "git_commit")
        return l.git_commit;
    const auto it = l.meta.find(key);
    return it == l.meta.end() || it->second.empty() ? "-" : it->second;
}

/// Whether a /meta key changes with every launch (its date, id, warnings, labels), so that
/// its moving says nothing of a change.
bool per_launch(const std::string& k) {
    for (const char* word : {"date", "time", "created", "launch", "warnings", "label.", "host"})
        if (k.find(word) != std::string::npos)
            return true;
    return k.size() >= 2 && k.compare(k.size() - 2, 2, "id") == 0;
}

/// "T threads on C core(s)" of an oversubscription in a launch's mark or /meta warnings
/// ("" when none), and C.
std::pair<std::string, std::string> oversubscription(const series_point& p) {
    for (const std::string& text : {p.c->machine, meta_of(*p.launch, "warnings")}) {
        const auto on = text.find(" threads on ");
        if (text.find("oversubscribed") == std::string::npos || on == std::string::npos)
            continue;
        auto start = text.rfind(' ', on - 1);
        start = start == std::string::npos ? 0 : start + 1;
        const auto end = text.find(" core", on + 12);
        if (end == std::string::npos)
            continue;
        return {text.substr(start, end + 5 - start), text.substr(on + 12, end - on - 12)};
    }
    return {"", ""};
}

/// "2026-12-07 04:13" (UTC) of a launch, or its created_utc where it has no date.
std::string launch_date(const launch_record& l) {
    if (l.time_s == std::numeric_limits<std::int64_t>::min())
        return l.created_utc.empty() ? "no date" : l.created_utc;
    const std::time_t t = static_cast<std::time_t>(l.time_s);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

/// The regressions at one launch with one cause: the phase that carried them and what
/// moved with them.
struct regression_group {
    const launch_record* launch = nullptr;
    std::size_t index = 0;
    std::string moved, with;
    double least = 0, most = 0;
    std::vector<std::string> series;

    std::string line() const {
        const std::string range = series.size() == 1
                                      ? fmt::format("{:+.0f}%", 100 * least)
                                      : fmt::format("{:+.0f}..{:+.0f}%", 100 * least, 100 * most);
        return fmt::format("REGRESSION at #{} ({}): {} series slower ({}), {}; with it: {}",
                           index + 1, launch_date(*launch), series.size(), range, moved,
                           with.empty() ? "nothing recorded moved" : with);
    }
};

void add_regression(std::vector<regression_group>& groups, const series& s) {
    const found_change& f = s.changes.back();
    const launch_record* at = s.points[f.index].launch;
    const bool cpu = !std::isnan(f.cpu_change);
    const std::string moved = f.moved + (cpu ? " (judged on CPU time: wall time contended)" : "");
    auto g = std::find_if(groups.begin(), groups.end(), [&](const regression_group& x) {
        return x.launch == at && x.moved == moved && x.with == f.with;
    });
    if (g == groups.end()) {
        groups.push_back({at, f.index, moved, f.with, f.change(), f.change(), {}});
        g = groups.end() - 1;
    }
    g->least = std::min(g->least, f.change());
    g->most = std::max(g->most, f.change());
    g->series.push_back(
        fmt::format("{} [{}]: {:+.1f}% at #{}{}", s.label, s.env, 100 * f.change(), f.index + 1,
                    cpu ? fmt::format(" (CPU time {:+.1f}%)", 100 * f.cpu_change) : ""));
}

/// The changes judged on CPU time that wall time alone calls slower, one line per launch:
/// shown, never hidden (a rank that waited for a core is slower for its user), and not a
/// regression of the code.
std::vector<std::string> wall_time_only(const series_set& set, double min_effect) {
    struct group {
        std::size_t index = 0, count = 0;
        double least = 0, most = 0, cpu_most = 0;
    };
    std::vector<std::pair<const launch_record*, group>> groups;
    for (const series& s : set.all)
        for (const found_change& f : s.changes) {
            if (std::isnan(f.cpu_change) || f.verdict.verdict == decision::slower ||
                !(f.change() > min_effect))
                continue;
            const launch_record* at = s.points[f.index].launch;
            auto g = std::find_if(groups.begin(), groups.end(),
                                  [&](const auto& x) { return x.first == at; });
            if (g == groups.end())
                g = groups.insert(groups.end(),
                                  {at, {f.index, 0, f.change(), f.change(), f.cpu_change}});
            ++g->second.count;
            g->second.least = std::min(g->second.least, f.change());
            g->second.most = std::max(g->second.most, f.change());
            g->second.cpu_most = std::max(g->second.cpu_most, f.cpu_change);
        }
    std::vector<std::string> out;
    for (const auto& [at, g] : groups)
        out.push_back(fmt::format(
            "wall time only at #{} ({}): {} series slower in wall time ({:+.0f}..{:+.0f}%), "
            "their compute CPU time at most {:+.1f}%: judged on CPU time, wall time contended "
            "(the change table has each)",
            g.index + 1, launch_date(*at), g.count, 100 * g.least, 100 * g.most, 100 * g.cpu_most));
    return out;
}

} // namespace

decision_result judge_change(const series& s, std::size_t lo, std::size_t at, std::size_t hi,
                             const change_options& opt) {
    decision_inputs in;
    in.launches_a = at - lo;
    in.launches_b = hi - at;
    std::vector<double> before, after;
    for (std::size_t i = lo; i < hi; ++i)
        (i < at ? before : after).push_back(s.points[i].c->step_s);
    const double ratio = median(after) / median(before);
    // The medians' ratio, log-normal: a median's SD is about 1.25 sigma / sqrt(n).
    const double half =
        1.96 * 1.2533 * s.noise *
        std::sqrt(1.0 / static_cast<double>(std::max<std::size_t>(1, in.launches_a)) +
                  1.0 / static_cast<double>(std::max<std::size_t>(1, in.launches_b)));
    in.ratio_lo = ratio * std::exp(-half);
    in.ratio_hi = ratio * std::exp(half);
    in.threshold = opt.min_effect;
    in.noise = s.noise;
    std::tie(in.mark_a, in.mark_reason_a) = largest_mark(s, lo, at);
    std::tie(in.mark_b, in.mark_reason_b) = largest_mark(s, at, hi);
    in.least_mark_a = least_mark(s, lo, at);
    in.least_mark_b = least_mark(s, at, hi);
    return decide(in);
}

std::string moved_with(const series& s, std::size_t lo, std::size_t at, std::size_t hi) {
    std::vector<std::string> parts;
    const std::size_t mb = marked_in(s, lo, at), ma = marked_in(s, at, hi);
    const double fb = static_cast<double>(mb) / static_cast<double>(at - lo);
    const double fa = static_cast<double>(ma) / static_cast<double>(hi - at);
    if (std::abs(fa - fb) >= 0.5) {
        std::string why;
        for (std::size_t i = fa > fb ? at : lo; i < (fa > fb ? hi : at) && why.empty(); ++i)
            if (marked(s.points[i]))
                why = fmt::format(" ({})", mark_text_of(s.points[i].c->machine));
        parts.push_back(fmt::format("marks {}/{} -> {}/{}{}", mb, at - lo, ma, hi - at, why));
    }
    const series_point &prev = s.points[at - 1], &cur = s.points[at];
    const auto [was, was_cores] = oversubscription(prev);
    const auto [now, now_cores] = oversubscription(cur);
    if (was != now)
        parts.push_back(
            fmt::format("ranks' cores {} -> {} ({}) at the same launch",
                        was.empty() ? "enough" : was_cores, now.empty() ? "enough" : now_cores,
                        now.empty() ? "no longer oversubscribed" : "oversubscribed: " + now));
    std::vector<std::string> keys = {"mpi_transport",       "threads_per_rank", "device_name",
                                     "blas_core",           "linear_gemm",      "attn_kernel",
                                     "cudnn_version",       "gpu_name",         "cuda_version",
                                     "cuda_driver_version", "nccl_version",     "mpi_library",
                                     "mpi_library_version", "numhosts",         "jobsize",
                                     "compiler_version",    "git_commit"};
    // Then every other /meta value that moved (what the page's "what moved" names), but for
    // those that change with each launch.
    for (const auto& [k, unused] : cur.launch->meta)
        if (std::find(keys.begin(), keys.end(), k) == keys.end() && !per_launch(k))
            keys.push_back(k);
    for (const std::string& key : keys) {
        const std::string a = meta_of(*prev.launch, key), b = meta_of(*cur.launch, key);
        if (a != b)
            parts.push_back(fmt::format("{} {} -> {} at the same launch", key, a, b));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::string too_few_launches(std::size_t n, double detectable, const change_options& opt) {
    const std::size_t m = std::max<std::size_t>(1, opt.min_segment);
    const double alpha = per_series(opt).alpha;
    const std::size_t needs = std::max(2 * m, smallest_launches(alpha, m));
    if (n < needs)
        return fmt::format(
            "too few launches: {}; needs {} (--alpha {}{}, --min-segment {})", n, needs, opt.alpha,
            opt.family > 1 ? fmt::format(" over {} series: {:.2g} each", opt.family, alpha) : "",
            m);
    if (std::isnan(detectable))
        return fmt::format("too few launches for its noise: {}; no step up to 1000x would be "
                           "found in it",
                           n);
    if (detectable > opt.max_detectable) {
        // The detectable step shrinks about as 1 / sqrt(launches) in log.
        const double more = std::log1p(detectable) / std::log1p(opt.max_detectable);
        return fmt::format("too few launches for its noise: {} (detects {:+.0f}%); needs about "
                           "{}",
                           n, 100 * detectable,
                           std::max(n + 1, static_cast<std::size_t>(
                                               std::ceil(static_cast<double>(n) * more * more))));
    }
    return "";
}

std::string undecided_reason(const series& s, const change_options& opt) {
    const std::string few = too_few_launches(s.points.size(), s.detectable, opt);
    if (!few.empty())
        return few;
    // Every launch marked: the busy machine is the baseline, unless the marks' effects
    // differ between launches by more than the series' noise.
    if (marked_in(s, 0, s.points.size()) == s.points.size()) {
        const double e = largest_mark(s, 0, s.points.size()).first;
        if (!(std::log(e / least_mark(s, 0, s.points.size())) <= s.noise))
            return fmt::format("every launch marked ({}), their effects differing beyond its "
                               "noise",
                               largest_mark(s, 0, s.points.size()).second);
    }
    if (!s.changes.empty() && s.changes.back().verdict.verdict == decision::not_decided)
        return fmt::format("its last change (#{}) is {}", s.changes.back().index + 1,
                           s.changes.back().verdict_line());
    return "";
}

verdict judge(const series_set& set, const series_options& options) {
    series_options opt = options;
    opt.change.family = set.family; // the level each series was tested at
    verdict v;
    std::size_t regressed = 0, undecided = 0, changes = 0;
    for (const std::string& line : set.unmatched) {
        v.lines.push_back("not decided: " + line);
        ++undecided;
    }
    std::vector<regression_group> groups;
    for (const series& s : set.all) {
        changes += s.changes.size();
        if (s.regressed()) {
            ++regressed;
            add_regression(groups, s);
            continue;
        }
        const std::string why = undecided_reason(s, opt.change);
        if (!why.empty()) {
            ++undecided;
            v.lines.push_back(fmt::format("not decided: {} [{}]: {}", s.label, s.env, why));
        }
    }
    std::vector<std::string> found;
    for (const regression_group& g : groups) {
        found.push_back(g.line());
        for (const std::string& one : g.series)
            found.push_back("  " + one);
    }
    for (const std::string& line : wall_time_only(set, opt.change.min_effect))
        found.push_back(line);
    v.lines.insert(v.lines.begin(), found.begin(), found.end());
    if (set.all.empty() && set.unmatched.empty()) {
        ++undecided;
        v.lines.push_back("not decided: no series left");
    }
    v.code = regressed ? exit_regression : undecided ? exit_not_decided : 0;
    v.summary = fmt::format("{} series, {} change point(s), {} regression(s), {} not decided: {}",
                            set.all.size(), changes, regressed, undecided,
                            v.code == exit_regression    ? "a regression (exit 1)"
                            : v.code == exit_not_decided ? "not decided (exit 6)"
                                                         : "judged, no regression (exit 0)");
    return v;
}

} // namespace ringscale::analysis::history
