#include "cpu_time.hpp"

#include "records.hpp"

#include "analysis/statistics/descriptive.hpp"

#include <algorithm>
#include <cmath>

namespace ringscale::analysis::history {

namespace {

/// Contended by others' load: a contention mark that is not the ranks' own oversubscription.
bool contended_by_others(const launch_case& c) {
    const std::string mark = mark_text_of(c.machine);
    return mark.rfind("contended: ", 0) == 0 && mark.find("oversubscribed") == std::string::npos;
}

std::vector<double> cpu_times(const series& s, std::size_t a, std::size_t b) {
    std::vector<double> v;
    for (std::size_t i = a; i < b; ++i)
        v.push_back(s.points[i].c->compute_cpu_s);
    return v;
}

} // namespace

bool judged_on_cpu(const series& s, std::size_t lo, std::size_t hi) {
    bool contended = false;
    std::vector<double> share;
    for (std::size_t i = lo; i < hi; ++i) {
        const launch_case& c = *s.points[i].c;
        if (!(std::isfinite(c.compute_cpu_s) && c.compute_cpu_s > 0 && c.step_s > 0))
            return false;
        contended = contended || contended_by_others(c);
        share.push_back(std::isnan(c.compute_s) ? 0 : c.compute_s / c.step_s);
    }
    return contended && !share.empty() && median(share) >= 0.5;
}

decision_result judge_cpu_change(const series& s, std::size_t lo, std::size_t at, std::size_t hi,
                                 const change_options& opt, double& change) {
    const std::vector<double> before = cpu_times(s, lo, at), after = cpu_times(s, at, hi);
    const double ratio = median(after) / median(before);
    change = ratio - 1;
    // The CPU series' own noise, from every launch that has one (a segment's alone is few).
    std::vector<double> all;
    for (std::size_t i = 0; i < s.points.size(); ++i)
        if (std::isfinite(s.points[i].c->compute_cpu_s) && s.points[i].c->compute_cpu_s > 0)
            all.push_back(s.points[i].c->compute_cpu_s);
    decision_inputs in;
    in.launches_a = before.size();
    in.launches_b = after.size();
    in.noise = launch_noise(all);
    // The medians' ratio, log-normal, as the wall time's (judge_change).
    const double half =
        1.96 * 1.2533 * in.noise *
        std::sqrt(1.0 / static_cast<double>(std::max<std::size_t>(1, in.launches_a)) +
                  1.0 / static_cast<double>(std::max<std::size_t>(1, in.launches_b)));
    in.ratio_lo = ratio * std::exp(-half);
    in.ratio_hi = ratio * std::exp(half);
    in.threshold = opt.min_effect;
    return decide(in);
}

} // namespace ringscale::analysis::history
