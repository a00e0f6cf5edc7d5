#include "verdict.hpp"

#include "records.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

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
    for (const char* key :
         {"threads_per_rank", "device_name", "blas_core", "linear_gemm", "gpu_name", "cuda_version",
          "cuda_driver_version", "nccl_version", "mpi_library", "mpi_library_version", "numhosts",
          "jobsize", "compiler_version", "git_commit"}) {
        const std::string a = meta_of(*prev.launch, key), b = meta_of(*cur.launch, key);
        if (a != b)
            parts.push_back(fmt::format("{} {} -> {} at the same launch", key, a, b));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::string undecided_reason(const series& s, const change_options& opt) {
    const std::size_t m = std::max<std::size_t>(1, opt.min_segment);
    if (s.points.size() < 2 * m)
        return fmt::format("{} launch(es), fewer than 2 x --min-segment {}", s.points.size(), m);
    if (std::isnan(s.detectable))
        return "no step up to 1000x would be found in it";
    if (marked_in(s, 0, s.points.size()) == s.points.size()) {
        const double e = largest_mark(s, 0, s.points.size()).first;
        if (!(std::log(e) <= s.noise))
            return fmt::format("every launch marked ({}), beyond its noise",
                               largest_mark(s, 0, s.points.size()).second);
    }
    if (!s.changes.empty() && s.changes.back().verdict.verdict == decision::not_decided)
        return fmt::format("its last change (#{}) is {}", s.changes.back().index + 1,
                           verdict_text(s.changes.back().verdict));
    return "";
}

verdict judge(const series_set& set, const series_options& opt) {
    verdict v;
    std::size_t regressed = 0, undecided = 0, changes = 0;
    for (const std::string& line : set.unmatched) {
        v.lines.push_back("not decided: " + line);
        ++undecided;
    }
    for (const series& s : set.all) {
        changes += s.changes.size();
        if (s.regressed()) {
            const found_change& f = s.changes.back();
            ++regressed;
            v.lines.push_back(fmt::format("REGRESSION {} [{}]: {:+.1f}% at #{}: {}{}{}", s.label,
                                          s.env, 100 * f.change(), f.index + 1, f.moved,
                                          f.with.empty() ? "" : "; ", f.with));
            continue;
        }
        const std::string why = undecided_reason(s, opt.change);
        if (!why.empty()) {
            ++undecided;
            v.lines.push_back(fmt::format("not decided: {} [{}]: {}", s.label, s.env, why));
        }
    }
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
