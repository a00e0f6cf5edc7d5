#include "accuracy.hpp"

#include "analysis/statistics/descriptive.hpp"
#include "src/base/dtype_names.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace ringscale::analysis {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// The median over the launches of `pc` of attribute `name`, NaN when none recorded it, +inf
/// when any recorded a non-finite value (an overflow is a result, and the worst one).
double median_of(const pooled_case& pc, const std::string& name) {
    std::vector<double> v;
    for (const case_data* c : pc.launches)
        if (const auto x = c->number(name)) {
            if (!std::isfinite(*x))
                return std::numeric_limits<double>::infinity();
            v.push_back(*x);
        }
    return v.empty() ? nan : median(v);
}

double max_finite(const tensor_errors& e) {
    double m = nan;
    for (double x : e)
        if (!std::isnan(x))
            m = std::isnan(m) ? x : std::max(m, x);
    return m;
}

std::string short_dtype(const std::string& dtype) {
    const dtypes::dtype_info* d = dtypes::find(dtype);
    return d ? d->short_name : dtype;
}

accuracy_case case_of(const pooled_case& pc, const accuracy_tolerance& tol) {
    accuracy_case a;
    a.pc = &pc;
    a.label = pc.label();
    a.p = pc.world_size;
    a.seq_len = median_of(pc, schema::attr::seq_len);
    a.dtype = short_dtype(pc.launches.front()->text(schema::attr::dtype, "fp32"));
    const dtypes::dtype_info* info = dtypes::find(a.dtype);
    const double unit = info ? info->unit_roundoff : nan;
    const double allowance = tol.limit(a.dtype, a.p);
    for (int t = 0; t < accuracy_tensor_count; ++t) {
        const std::string name = schema::acc_tensors[t];
        a.dist[t] = median_of(pc, schema::acc_attr("", name, "max_rel"));
        a.rms[t] = median_of(pc, schema::acc_attr("", name, "rms_rel"));
        a.single[t] = median_of(pc, schema::acc_attr("single_", name, "max_rel"));
        for (double v : {a.dist[t], a.rms[t], a.single[t]})
            a.non_finite = a.non_finite || std::isinf(v);
        // The dtype's own rounding of this tensor: what one rank computes in the same dtype.
        const double rounding = std::isnan(a.single[t]) ? unit : a.single[t];
        if (a.dist[t] - rounding > allowance)
            a.over_limit = true;
        // FlashAttention's rule, with fp32's unit roundoff as the floor of a tiny single error.
        if (a.dist[t] > tol.single_factor * std::max(a.single[t], 0x1p-24))
            a.over_single = true;
    }
    return a;
}

/// A relative error's cell: "inf" (a string in CSV and JSON) for an overflow, "-" for none.
cell error_cell(double v) {
    return std::isinf(v) ? cell{"inf", "inf"}
                         : number_cell(v, std::isnan(v) ? "-" : fmt::format("{:.2e}", v));
}

/// The growth along `axis` (P or S) of each tensor's error and of the worst.
void fill_growth(accuracy_series& s, bool over_p) {
    const auto x_of = [&](const accuracy_case* c) {
        return over_p ? static_cast<double>(c->p) : c->seq_len;
    };
    for (int t = 0; t < accuracy_tensor_count; ++t) {
        std::vector<std::pair<double, double>> xy;
        for (const accuracy_case* c : s.points)
            xy.emplace_back(x_of(c), c->dist[t]);
        s.growth[t] = growth_per_doubling(xy);
    }
    std::vector<std::pair<double, double>> worst;
    for (const accuracy_case* c : s.points)
        worst.emplace_back(x_of(c), c->worst());
    s.growth_worst = growth_per_doubling(worst);
}

/// Series of cases sharing `key_of`, ascending by `less`, each of two or more cases.
template <class Key, class Less>
std::vector<accuracy_series> series_of(const std::vector<accuracy_case>& cases, Key key_of,
                                       Less less, bool over_p) {
    std::map<std::string, std::vector<const accuracy_case*>> groups;
    for (const accuracy_case& c : cases)
        groups[key_of(c)].push_back(&c);
    std::vector<accuracy_series> out;
    for (auto& [key, members] : groups) {
        if (members.size() < 2)
            continue;
        std::sort(members.begin(), members.end(), less);
        accuracy_series s;
        s.label = key;
        s.points = members;
        fill_growth(s, over_p);
        out.push_back(std::move(s));
    }
    return out;
}

std::string joined(const param_list& params) {
    std::string s;
    for (const auto& [k, v] : params)
        s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
    return s;
}

std::string factor(double v) {
    return std::isnan(v) ? "-" : fmt::format("x{:.2f}", v);
}

} // namespace

double accuracy_tolerance::limit(const std::string& dtype, int p) const {
    if (!std::isnan(fixed))
        return fixed;
    const dtypes::dtype_info* d = dtypes::find(dtype);
    return d ? dtypes::accuracy_allowance(*d, p) : nan;
}

std::string accuracy_tolerance::describe() const {
    const std::string allowance =
        std::isnan(fixed) ? fmt::format("{} (PyTorch's context-parallel tests' rtol; fp8 scaled "
                                        "by its unit roundoff)",
                                        dtypes::describe_allowances())
                          : fmt::format("{:g} (--tolerance)", fixed);
    return fmt::format("each tensor's error is judged against its dtype's own rounding (the "
                       "single-rank error of the same rows; the dtype's unit roundoff where that "
                       "was not measured): flagged 'limit' where it passes that rounding by more "
                       "than {}; 'single' where it passes {:g} x the single-rank error "
                       "(FlashAttention's tests' rule); 'non-finite' where a field recorded inf "
                       "or NaN (an overflow)",
                       allowance, single_factor);
}

double accuracy_case::worst() const {
    return max_finite(dist);
}

double accuracy_case::worst_single() const {
    return max_finite(single);
}

double accuracy_case::added() const {
    const double w = worst(), s = worst_single();
    return s > 0 && std::isfinite(s) && std::isfinite(w) ? w / s : nan;
}

double growth_per_doubling(const std::vector<std::pair<double, double>>& xy) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& [x, y] : xy)
        if (x > 0 && y > 0 && std::isfinite(x) && std::isfinite(y))
            pts.emplace_back(std::log2(x), std::log2(y));
    double mx = 0, my = 0;
    for (const auto& [x, y] : pts) {
        mx += x;
        my += y;
    }
    if (pts.size() < 2)
        return nan;
    mx /= static_cast<double>(pts.size());
    my /= static_cast<double>(pts.size());
    double sxx = 0, sxy = 0;
    for (const auto& [x, y] : pts) {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
    }
    return sxx > 0 ? std::exp2(sxy / sxx) : nan;
}

accuracy_result accuracy_of(const std::vector<pooled_case>& pooled,
                            const accuracy_tolerance& tolerance) {
    accuracy_result r;
    r.tolerance = tolerance;
    for (const pooled_case& pc : pooled)
        if (!pc.launches.empty() && pc.scaling != "weak") {
            accuracy_case a = case_of(pc, tolerance);
            if (!std::isnan(a.worst()))
                r.cases.push_back(std::move(a));
        }
    std::stable_sort(r.cases.begin(), r.cases.end(), [](const auto& a, const auto& b) {
        return a.label != b.label ? a.label < b.label : a.p < b.p;
    });
    std::vector<const pooled_case*> all;
    for (const accuracy_case& c : r.cases) {
        r.flagged += c.flagged() ? 1 : 0;
        all.push_back(c.pc);
    }
    r.common = common_params(all);
    r.over_p = series_of(
        r.cases, [](const accuracy_case& c) { return c.label; },
        [](const accuracy_case* a, const accuracy_case* b) { return a->p < b->p; }, true);
    r.over_s = series_of(
        r.cases,
        [](const accuracy_case& c) {
            return strip_params(c.label, {{schema::attr::seq_len, fmt::format("{}", c.seq_len)}}) +
                   fmt::format(" P={}", c.p);
        },
        [](const accuracy_case* a, const accuracy_case* b) { return a->seq_len < b->seq_len; },
        false);
    return r;
}

table accuracy_case_table(const accuracy_result& r) {
    table t;
    const param_list& common = r.common;
    t.caption = "max relative error against fp64 (normwise over the sampled rows); shared: " +
                joined(common);
    t.add_column("case", "case");
    t.add_column("P", "p");
    for (const char* name : schema::acc_tensors)
        t.add_column(name, std::string("max_rel_") + name);
    t.add_column("worst", "worst");
    t.add_column("single", "single_worst");
    t.add_column("added", "added");
    t.add_column("flag", "flag");
    for (const accuracy_case& c : r.cases) {
        std::vector<cell> row = {text_cell(strip_params(c.label, common)), int_cell(c.p)};
        for (double v : c.dist)
            row.push_back(error_cell(v));
        row.push_back(error_cell(c.worst()));
        row.push_back(error_cell(c.worst_single()));
        const double added = c.added();
        row.push_back(number_cell(added, factor(added)));
        std::string flag;
        for (const auto& [on, name] : {std::pair{c.non_finite, "non-finite"},
                                       {c.over_limit, "limit"},
                                       {c.over_single, "single"}})
            if (on)
                flag += (flag.empty() ? "" : ",") + std::string(name);
        row.push_back(text_cell(flag));
        t.rows.push_back(std::move(row));
    }
    return t;
}

table accuracy_growth_table(const accuracy_result& r, const char* axis) {
    const bool p = std::string(axis) == "P";
    const std::vector<accuracy_series>& series = p ? r.over_p : r.over_s;
    table t;
    t.caption = fmt::format("growth of the max relative error per doubling of {} (least squares "
                            "of log2 error on log2 {})",
                            axis, axis);
    t.add_column("series", "series");
    t.add_column(axis, "range");
    for (const char* name : schema::acc_tensors)
        t.add_column(name, std::string("growth_") + name);
    t.add_column("worst", "growth_worst");
    for (const accuracy_series& s : series) {
        const accuracy_case& lo = *s.points.front();
        const accuracy_case& hi = *s.points.back();
        std::vector<cell> row = {
            text_cell(strip_params(s.label, r.common)),
            text_cell(p ? fmt::format("{}-{}", lo.p, hi.p)
                        : fmt::format("{}-{}", format_size(static_cast<std::uint64_t>(lo.seq_len)),
                                      format_size(static_cast<std::uint64_t>(hi.seq_len))))};
        for (double g : s.growth)
            row.push_back(number_cell(g, factor(g)));
        row.push_back(number_cell(s.growth_worst, factor(s.growth_worst)));
        t.rows.push_back(std::move(row));
    }
    return t;
}

} // namespace ringscale::analysis
