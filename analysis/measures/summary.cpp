#include "summary.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "peak.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace ringscale::analysis {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// Sum of a dataset over measured rows and all ranks.
double measured_sum(const case_data& c, const std::vector<double>& data) {
    double s = 0;
    for (std::size_t r : c.measured_rows())
        for (std::size_t k = 0; k < c.world; ++k)
            s += data[r * c.world + k];
    return s;
}

double share(const pooled_case& p, std::vector<double> case_data::*member) {
    double part = 0;
    double total = 0;
    for (const case_data* c : p.launches) {
        if ((c->*member).empty())
            return nan;
        part += measured_sum(*c, c->*member);
        total += measured_sum(*c, c->time_s);
    }
    return total > 0 ? part / total : nan;
}

/// Withhold a rate: the figure is cleared and the column keyed `key` shows `flag`.
void withhold(case_summary& s, std::optional<double>& v, const std::string& key,
              const std::string& flag) {
    v.reset();
    s.flags[key] = flag;
}

void throughput(const pooled_case& p, case_summary& s, const summary_options& opt) {
    const case_data& c = *p.launches.front();
    const double t = s.median.value;
    if (!(t > 0))
        return;
    const double P = p.world_size;
    if (auto f = c.number(schema::attr::flops_per_iter); f && *f > 0)
        s.flops_per_rank = *f / t / P;
    if (auto tok = c.number(schema::attr::tokens_per_iter); tok && *tok > 0)
        s.tokens_per_s = *tok / t;
    if (auto b = c.number(schema::attr::bytes); b && p.job == "collectives") {
        s.algbw = *b / t;
        s.busbw = *s.algbw * c.number(schema::attr::busbw_factor).value_or(1.0);
    }
    if (auto cb = c.number(schema::attr::comm_bytes_per_iter); cb && *cb > 0)
        s.comm_bw_per_rank = *cb / t;
    const std::string who = fmt::format("case {} P={}", p.label(), p.world_size);
    if (!noop_reason(p.job, p.world_size).empty()) { // not an impossible figure: no figure
        withhold(s, s.algbw, "algbw_gbs", "no-op");
        withhold(s, s.busbw, "busbw_gbs", "no-op");
        s.comm_bw_per_rank.reset();
    }
    if (auto pk = case_peak(c, opt.limits);
        pk && s.flops_per_rank && *s.flops_per_rank > pk->gflops * 1e9) {
        s.rejected.push_back(fmt::format("{}: {:.4g} GFLOP/s per rank is above the peak ({}); "
                                         "FLOP/s withheld",
                                         who, *s.flops_per_rank / 1e9, pk->source));
        withhold(s, s.flops_per_rank, "gflops_per_rank", "impossible");
    }
    const mfu_figure mfu = case_mfu(c, s.flops_per_rank, opt.limits.peak_tflops);
    s.mfu_percent = mfu.percent;
    s.mfu_note = mfu.note;
    const link_ceiling link = case_link(c, opt.limits);
    auto gate = [&](std::optional<double>& v, const char* what) {
        if (!v || *v <= link.gbs * 1e9)
            return;
        s.rejected.push_back(fmt::format("{}: {} {:.4g} GB/s is above the ceiling ({}); "
                                         "bandwidth withheld",
                                         who, what, *v / 1e9, link.source));
        withhold(s, s.algbw, "algbw_gbs", "impossible");
        withhold(s, s.busbw, "busbw_gbs", "impossible");
        s.comm_bw_per_rank.reset();
    };
    gate(s.busbw, "busbw");
    gate(s.algbw, "algbw");
    gate(s.comm_bw_per_rank, "per-rank communication bandwidth");
}

/// Per-rank medians of time_s over the measured rows of one launch.
std::vector<double> per_rank_medians(const case_data& c) {
    const auto rows = c.measured_rows();
    std::vector<double> out(c.world);
    std::vector<double> col(rows.size());
    for (std::size_t k = 0; k < c.world; ++k) {
        for (std::size_t i = 0; i < rows.size(); ++i)
            col[i] = c.time_s[rows[i] * c.world + k];
        out[k] = median_inplace(col);
    }
    return out;
}

} // namespace

case_summary summarize(const pooled_case& p, const summary_options& opt) {
    case_summary s;
    s.source = &p;
    s.launches = p.launches.size();
    s.not_ok = p.not_ok.size();
    s.incomplete = p.incomplete();
    if (p.launches.empty()) {
        s.status = p.not_ok.empty() ? "empty" : p.not_ok.front()->status;
        s.error = p.not_ok.empty() ? "" : p.not_ok.front()->error;
        s.median = {nan, nan, nan};
        s.p10 = s.p90 = s.p99 = s.min = s.mean = s.cv = s.imbalance = nan;
        s.comm_share = s.compute_share = nan;
        return s;
    }
    std::vector<double> steps = p.steps();
    std::sort(steps.begin(), steps.end());
    const tukey_fences fences = tukey_fences_sorted(steps);
    s.outliers = count_outside(steps, fences);
    if (opt.remove_outliers && s.outliers > 0) {
        steps = remove_outside(steps, fences); // stays sorted
        s.outliers_removed = true;
    }
    s.n = steps.size();
    s.median = median_ci_sorted(steps, opt.level);
    s.p10 = quantile_sorted(steps, 0.10);
    s.p90 = quantile_sorted(steps, 0.90);
    s.p99 = quantile_sorted(steps, 0.99);
    s.min = steps.front();
    s.mean = mean(steps);
    s.cv = coefficient_of_variation(steps);
    std::vector<double> imbalances;
    for (const case_data* c : p.launches) {
        const auto m = per_rank_medians(*c);
        const double avg = mean(m);
        imbalances.push_back(avg > 0 ? *std::max_element(m.begin(), m.end()) / avg : nan);
    }
    s.imbalance = median_inplace(imbalances);
    s.comm_share = share(p, &case_data::comm_wait_s);
    s.compute_share = share(p, &case_data::compute_s);
    throughput(p, s, opt);
    return s;
}

std::vector<case_summary> summarize_all(const std::vector<pooled_case>& cases,
                                        const summary_options& opt) {
    std::vector<case_summary> out;
    out.reserve(cases.size());
    for (const auto& c : cases)
        out.push_back(summarize(c, opt));
    return out;
}

time_breakdown breakdown(const pooled_case& p) {
    double compute = 0, comm = 0, total = 0, count = 0;
    bool have_compute = true, have_comm = true;
    for (const case_data* c : p.launches) {
        have_compute = have_compute && !c->compute_s.empty();
        have_comm = have_comm && !c->comm_wait_s.empty();
        total += measured_sum(*c, c->time_s);
        if (have_compute)
            compute += measured_sum(*c, c->compute_s);
        if (have_comm)
            comm += measured_sum(*c, c->comm_wait_s);
        count += static_cast<double>(c->step_s.size() * c->world);
    }
    if (count == 0)
        return {nan, nan, nan};
    const double cs = have_compute ? compute / count : nan;
    const double ws = have_comm ? comm / count : nan;
    const double rest = total / count - (have_compute ? cs : 0) - (have_comm ? ws : 0);
    return {cs, ws, std::max(0.0, rest)};
}

} // namespace ringscale::analysis
