#include "analysis/comparisons/numerics.hpp"

#include "analysis/comparisons/accuracy.hpp"
#include "src/base/numerics_schema.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

const std::vector<double>* series(const numerics_data& d, const char* name) {
    const auto it = d.find(name);
    return it == d.end() ? nullptr : &it->second;
}

// |a - b| with a non-finite operand as infinite.
double gap(double a, double b) {
    const double e = std::fabs(a - b);
    return std::isfinite(e) ? e : INFINITY;
}

// Two-sided 95% Student t quantile with `df` degrees of freedom (table to 30, then 1.96).
double t95(std::size_t df) {
    static const double t[] = {12.706, 4.303, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                               2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
                               2.101,  2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
                               2.056,  2.052, 2.048, 2.045, 2.042, 2.042};
    return df == 0 ? NAN : df <= 30 ? t[df - 1] : 1.96;
}

std::string fmt_g(double v) {
    return std::isfinite(v) ? fmt::format("{:.3g}", v) : (std::isnan(v) ? "-" : "inf");
}

} // namespace

std::string numerics_result::count_line() const {
    std::string line = fmt::format("{} of {} cases diverge", diverged, cases.size());
    if (no_verdict > 0)
        line += fmt::format("; {} without a verdict", no_verdict);
    if (beyond_budget > 0)
        line += fmt::format("; {} beyond the dtype's budget against fp64", beyond_budget);
    if (not_decided > 0)
        line += fmt::format("; {} not decided (the floor diverges as much)", not_decided);
    return line;
}

divergence_summary summarize(const std::vector<double>& a, const std::vector<double>& b) {
    divergence_summary s;
    const std::size_t n = std::min(a.size(), b.size());
    if (n == 0)
        return no_summary(); // no steps: nothing to show, and nothing pooled as 0
    double sum = 0, sq = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double e = gap(a[i], b[i]);
        sum += e;
        sq += e * e;
        s.max = std::max(s.max, e);
    }
    s.mae = sum / static_cast<double>(n);
    s.rmse = std::sqrt(sq / static_cast<double>(n));
    return s;
}

divergence_summary no_summary() {
    return {NAN, NAN, NAN};
}

mean_ci mean_with_ci(const std::vector<double>& v) {
    mean_ci m;
    if (v.empty())
        return m;
    double sum = 0;
    for (double x : v)
        sum += x;
    m.mean = sum / static_cast<double>(v.size());
    if (v.size() == 1) {
        m.lo = m.hi = m.mean;
        return m;
    }
    double sq = 0;
    for (double x : v)
        sq += (x - m.mean) * (x - m.mean);
    const double se = std::sqrt(sq / static_cast<double>(v.size() - 1) / v.size());
    m.lo = m.mean - t95(v.size() - 1) * se;
    m.hi = m.mean + t95(v.size() - 1) * se;
    return m;
}

numerics_result numerics_of(const std::vector<pooled_case>& pooled, double k) {
    numerics_result r;
    r.k = k;
    for (const pooled_case& pc : pooled) {
        const case_data* c = !pc.launches.empty() ? pc.launches.front()
                             : !pc.not_ok.empty() ? pc.not_ok.front()
                                                  : nullptr;
        if (!c || c->numerics.empty())
            continue;
        numerics_case n;
        n.pc = &pc;
        n.p = pc.world_size;
        n.dtype = c->text(schema::attr::dtype, "fp32");
        n.seed = c->text("data_seed", "0");
        n.config = strip_params(pc.label(), {{"data_seed", n.seed}});
        const numerics_data& d = c->numerics;
        const auto get = [&](const char* name) {
            const auto* s = series(d, name);
            return s ? *s : std::vector<double>{};
        };
        n.steps = static_cast<int>(get("loss").size());
        n.vs_ref = summarize(get("loss"), get("ref_loss"));
        n.floor = summarize(get("floor_loss"), std::vector<double>(get("floor_loss").size(), 0));
        if (series(d, "fp64_loss") && series(d, "floor_fp64_loss")) {
            n.vs_fp64 = summarize(get("loss"), get("fp64_loss"));
            const std::vector<double>& f64 = get("floor_fp64_loss");
            n.floor_fp64 = summarize(f64, std::vector<double>(f64.size(), 0));
        }
        if (n.steps > 0) {
            n.param_err_last = get("param_abs_err").back();
            n.param_rel_last = get("param_rel_err").back();
            n.floor_param_last = get("floor_param_abs").back();
        }
        n.verdict = judge_numerics(d, k);
        const auto cost = [&](const char* name, const char* reused) {
            const auto v = c->number(name);
            return v && c->number(reused).value_or(0) == 0 ? *v : NAN;
        };
        n.fp64_s = cost(schema::attr::numerics_fp64_s, schema::attr::numerics_fp64_reused);
        n.ref_s = cost(schema::attr::numerics_reference_s, schema::attr::numerics_baseline_reused);
        n.floor_s = cost(schema::attr::numerics_floor_s, schema::attr::numerics_baseline_reused);
        n.run_s = c->number(schema::attr::numerics_run_s).value_or(NAN);
        r.diverged += n.verdict.kind == numerics_kind::diverged ? 1 : 0;
        r.no_verdict += n.verdict.kind == numerics_kind::no_verdict ? 1 : 0;
        r.beyond_budget += n.verdict.kind == numerics_kind::beyond_budget ? 1 : 0;
        r.not_decided += n.verdict.kind == numerics_kind::not_decided ? 1 : 0;
        r.cases.push_back(std::move(n));
    }
    std::stable_sort(r.cases.begin(), r.cases.end(), [](const auto& a, const auto& b) {
        if (a.config != b.config)
            return a.config < b.config;
        return a.p != b.p ? a.p < b.p : text_less(a.seed, b.seed);
    });
    return r;
}

table numerics_case_table(const numerics_result& r) {
    table t;
    t.caption = fmt::format("loss against the single-rank run of the same dtype and the "
                            "reduction-order floor, then against the single-rank fp64 run (64: "
                            "the case's; floor64: the floor runs' worst; /budget64: the largest "
                            "ratio to the dtype's budget against fp64); verdict at k = {:g} x "
                            "floor",
                            r.k);
    for (const auto& [title, key] :
         std::vector<std::pair<const char*, const char*>>{{"case", "case"},
                                                          {"P", "p"},
                                                          {"dtype", "dtype"},
                                                          {"seed", "seed"},
                                                          {"steps", "steps"},
                                                          {"MAE", "loss_mae"},
                                                          {"RMSE", "loss_rmse"},
                                                          {"max|d|", "loss_max"},
                                                          {"floor max", "floor_loss_max"},
                                                          {"param err", "param_abs_err_last"},
                                                          {"param rel", "param_rel_err_last"},
                                                          {"floor param", "floor_param_last"},
                                                          {"MAE64", "fp64_loss_mae"},
                                                          {"RMSE64", "fp64_loss_rmse"},
                                                          {"max64", "fp64_loss_max"},
                                                          {"floor64", "floor_fp64_loss_max"},
                                                          {"/budget64", "fp64_budget_ratio"},
                                                          {"verdict", "verdict"}})
        t.add_column(title, key);
    // Too wide for the terminal: the fp64 MAE and RMSE go first, the max against fp64 stays
    // beside its floor (--wide, CSV and JSON keep both).
    t.fit_drop_first = {"MAE64", "RMSE64"};
    for (const numerics_case& c : r.cases)
        t.rows.push_back({text_cell(c.config), int_cell(c.p), text_cell(c.dtype), text_cell(c.seed),
                          int_cell(c.steps), number_cell(c.vs_ref.mae, fmt_g(c.vs_ref.mae)),
                          number_cell(c.vs_ref.rmse, fmt_g(c.vs_ref.rmse)),
                          number_cell(c.vs_ref.max, fmt_g(c.vs_ref.max)),
                          number_cell(c.floor.max, fmt_g(c.floor.max)),
                          number_cell(c.param_err_last, fmt_g(c.param_err_last)),
                          number_cell(c.param_rel_last, fmt_g(c.param_rel_last)),
                          number_cell(c.floor_param_last, fmt_g(c.floor_param_last)),
                          number_cell(c.vs_fp64.mae, fmt_g(c.vs_fp64.mae)),
                          number_cell(c.vs_fp64.rmse, fmt_g(c.vs_fp64.rmse)),
                          number_cell(c.vs_fp64.max, fmt_g(c.vs_fp64.max)),
                          number_cell(c.floor_fp64.max, fmt_g(c.floor_fp64.max)),
                          number_cell(c.verdict.budget_ratio, fmt_g(c.verdict.budget_ratio)),
                          text_cell(c.verdict.text())});
    return t;
}

table numerics_config_table(const numerics_result& r) {
    table t;
    t.caption = "over seeds: max |loss - ref| mean with its 95% t interval; growth: the mean's "
                "factor per doubling of P (NaN: fewer than two P)";
    for (const auto& [title, key] :
         std::vector<std::pair<const char*, const char*>>{{"configuration", "config"},
                                                          {"P", "p"},
                                                          {"seeds", "seeds"},
                                                          {"max|d| mean", "loss_max_mean"},
                                                          {"95% CI", "loss_max_ci"},
                                                          {"diverged", "diverged"},
                                                          {"verdict", "first"},
                                                          {"growth/2xP", "growth_p"}})
        t.add_column(title, key);
    std::map<std::string, std::vector<std::pair<double, double>>> by_config; // (P, mean)
    std::vector<std::vector<cell>> rows;
    for (std::size_t i = 0; i < r.cases.size();) {
        std::size_t j = i;
        std::vector<double> maxes;
        std::size_t diverged = 0, seeds = 0;
        const numerics_verdict* first = nullptr; // the verdict that wins over the seeds
        for (; j < r.cases.size() && r.cases[j].config == r.cases[i].config &&
               r.cases[j].p == r.cases[i].p;
             ++j) {
            const numerics_case& c = r.cases[j];
            ++seeds;
            if (!std::isnan(c.vs_ref.max))
                maxes.push_back(c.vs_ref.max);
            diverged += c.verdict.diverged() ? 1 : 0;
            first = first ? &worse(*first, c.verdict) : &c.verdict;
        }
        const mean_ci m = mean_with_ci(maxes);
        by_config[r.cases[i].config].emplace_back(r.cases[i].p, m.mean);
        t.rows.push_back({text_cell(r.cases[i].config), int_cell(r.cases[i].p),
                          int_cell(static_cast<long long>(seeds)),
                          number_cell(m.mean, fmt_g(m.mean)),
                          text_cell(fmt::format("[{}, {}]", fmt_g(m.lo), fmt_g(m.hi))),
                          text_cell(fmt::format("{}/{}", diverged, seeds)),
                          text_cell(first->text()), text_cell("")});
        i = j;
    }
    for (auto& row : t.rows) {
        const double g = growth_per_doubling(by_config[row[0].text]);
        row[7] = number_cell(g, fmt_g(g));
    }
    return t;
}

} // namespace ringscale::analysis
