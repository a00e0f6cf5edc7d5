#include "numerics_report.hpp"

#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace ringscale::analysis {

namespace {

/// The series of case `c` as numerics_of read them: its first launch's (or its first not-ok
/// launch's, where none was ok).
const numerics_data* data_of(const numerics_case& c) {
    if (!c.pc)
        return nullptr;
    const case_data* d = !c.pc->launches.empty() ? c.pc->launches.front()
                         : !c.pc->not_ok.empty() ? c.pc->not_ok.front()
                                                 : nullptr;
    return d ? &d->numerics : nullptr;
}

const std::vector<double>& series(const numerics_case& c, const char* name) {
    static const std::vector<double> none;
    const numerics_data* d = data_of(c);
    const auto it = d ? d->find(name) : numerics_data::const_iterator{};
    return d && it != d->end() ? it->second : none;
}

/// The first step (1-based) whose loss is not finite; 0 when none.
int first_non_finite(const numerics_case& c) {
    const auto& loss = series(c, "loss");
    for (std::size_t i = 0; i < loss.size(); ++i)
        if (!std::isfinite(loss[i]))
            return static_cast<int>(i) + 1;
    return 0;
}

/// One dtype's drawn cases and their legend names.
struct dtype_lines {
    std::vector<const numerics_case*> cases; ///< diverged first, then the first seed of each
    std::vector<std::string> names;
    std::size_t total = 0; ///< the dtype's cases
    std::size_t stride = 1;
    std::set<int> keep; ///< steps drawn whatever the stride (verdicts, non-finite losses)
};

dtype_lines pick(const numerics_result& r, const std::string& dtype) {
    dtype_lines out;
    std::vector<const numerics_case*> rest;
    std::set<std::pair<std::string, int>> seen; // (config, P): r.cases are by config, P, seed
    for (const numerics_case& c : r.cases) {
        if (c.dtype != dtype)
            continue;
        ++out.total;
        const bool first_seed = seen.insert({c.config, c.p}).second;
        if (c.verdict.kind != numerics_kind::same)
            out.cases.push_back(&c);
        else if (first_seed)
            rest.push_back(&c);
    }
    out.cases.insert(out.cases.end(), rest.begin(), rest.end());
    if (out.cases.size() > numerics_max_lines)
        out.cases.resize(numerics_max_lines);
    std::vector<const pooled_case*> pcs;
    std::set<std::string> seeds;
    std::size_t steps = 0;
    for (const numerics_case* c : out.cases) {
        pcs.push_back(c->pc);
        seeds.insert(c->seed);
        steps = std::max(steps, series(*c, "loss").size());
        out.keep.insert(c->verdict.step);
        out.keep.insert(first_non_finite(*c));
    }
    const param_list common = common_params(pcs);
    for (const numerics_case* c : out.cases)
        out.names.push_back(fmt::format("{} P={}{}", strip_params(c->config, common), c->p,
                                        seeds.size() > 1 ? " seed=" + c->seed : ""));
    out.stride = std::max<std::size_t>(1, (steps + numerics_max_points - 1) / numerics_max_points);
    return out;
}

/// The line of `v` against the step, every `l.stride`-th step and the kept ones; values that
/// are not finite, or not positive where `positive`, are NaN (a gap). Empty when none is left.
panel_series line_of(const std::string& name, const std::vector<double>& v, const dtype_lines& l,
                     bool positive, const std::string& about) {
    panel_series s{name, {}};
    bool any = false;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i % l.stride != 0 && i + 1 != v.size() && !l.keep.count(static_cast<int>(i) + 1))
            continue;
        const bool drawn = std::isfinite(v[i]) && (!positive || v[i] > 0);
        any = any || drawn;
        panel_point pt{static_cast<double>(i) + 1, drawn ? v[i] : NAN, NAN, NAN};
        pt.about = about;
        s.points.push_back(std::move(pt));
    }
    if (!any)
        s.points.clear();
    return s;
}

/// |a - b| per step (non-finite where either is).
std::vector<double> gaps(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> g(std::min(a.size(), b.size()));
    for (std::size_t i = 0; i < g.size(); ++i)
        g[i] = std::fabs(a[i] - b[i]);
    return g;
}

/// The dtype's floor: per step the largest floor_loss of its cases, as a running max (the
/// envelope the verdict applies).
std::vector<double> dtype_floor(const numerics_result& r, const std::string& dtype) {
    std::vector<double> f;
    for (const numerics_case& c : r.cases) {
        if (c.dtype != dtype)
            continue;
        const auto& fl = series(c, "floor_loss");
        if (fl.size() > f.size())
            f.resize(fl.size(), 0.0);
        for (std::size_t i = 0; i < fl.size(); ++i)
            if (std::isfinite(fl[i]))
                f[i] = std::max(f[i], fl[i]);
    }
    for (std::size_t i = 1; i < f.size(); ++i)
        f[i] = std::max(f[i], f[i - 1]);
    return f;
}

/// A marker at each drawn case's verdict step, and at its first non-finite loss where that is
/// another step; at most 6 (the title says how many more).
std::size_t add_markers(plot_panel& p, const dtype_lines& l) {
    std::size_t all = 0;
    for (std::size_t i = 0; i < l.cases.size(); ++i) {
        const numerics_case& c = *l.cases[i];
        std::vector<panel_marker> mk;
        if (c.verdict.step > 0)
            mk.push_back(
                {static_cast<double>(c.verdict.step), l.names[i] + ": " + c.verdict.text()});
        if (const int s = first_non_finite(c); s > 0 && s != c.verdict.step)
            mk.push_back({static_cast<double>(s),
                          fmt::format("{}: non-finite loss at step {} (diverged)", l.names[i], s)});
        for (panel_marker& m : mk)
            if (++all <= 6)
                p.markers.push_back(std::move(m));
    }
    return all > 6 ? all - 6 : 0;
}

} // namespace

std::vector<plot_panel> numerics_panels(const numerics_result& r, bool divergence) {
    std::set<std::string> dtypes;
    for (const numerics_case& c : r.cases)
        dtypes.insert(c.dtype);
    std::vector<plot_panel> panels;
    for (const std::string& dtype : dtypes) {
        const dtype_lines l = pick(r, dtype);
        std::string title = dtype;
        if (l.cases.size() < l.total)
            title += fmt::format(": {} of {} cases (every diverged one first, then the first "
                                 "seed of each configuration and P)",
                                 l.cases.size(), l.total);
        if (l.stride > 1)
            title += fmt::format("; every {}th step", l.stride);
        plot_panel p = make_panel(
            title, "step", divergence ? "|loss - reference|" : "loss (reference: single rank)");
        p.x_log2 = false;
        p.legend_below = true;
        std::set<std::string> refs;
        for (std::size_t i = 0; i < l.cases.size(); ++i) {
            const numerics_case& c = *l.cases[i];
            const std::string about = fmt::format("case: {}\nP: {}\nseed: {}\nverdict: {}",
                                                  c.pc->label(), c.p, c.seed, c.verdict.text());
            const auto& loss = series(c, "loss");
            const auto& ref = series(c, "ref_loss");
            p.series.push_back(divergence ? line_of(l.names[i], gaps(loss, ref), l, true, about)
                                          : line_of(l.names[i], loss, l, false, about));
            const std::string ref_name = l.names[i].find(" seed=") != std::string::npos
                                             ? "reference seed=" + c.seed
                                             : "reference";
            if (!divergence && refs.insert(ref_name).second)
                p.series.push_back(line_of(ref_name, ref, l, false, "single-rank reference"));
        }
        if (divergence) {
            const std::vector<double> f = dtype_floor(r, dtype);
            std::vector<double> kf(f);
            for (double& v : kf)
                v *= r.k;
            p.series.push_back(line_of("floor (reduction order)", f, l, true, ""));
            p.series.push_back(line_of(fmt::format("{:g} x floor", r.k), kf, l, true, ""));
        }
        if (const std::size_t more = add_markers(p, l); more > 0)
            p.title += fmt::format(" ({} more divergences in the tables)", more);
        p.series.erase(std::remove_if(p.series.begin(), p.series.end(),
                                      [](const panel_series& s) { return s.points.empty(); }),
                       p.series.end());
        panels.push_back(std::move(p));
    }
    return panels;
}

std::string numerics_section(const numerics_result& r, const std::string& dir, bool plots,
                             std::vector<std::string>& pngs) {
    if (r.cases.empty())
        return {};
    std::string md = fmt::format(
        "\n## Training numerics\n\nEach train_step case run with --numerics: its loss, "
        "gradient norm and parameters step by step against the single-rank reference of the same "
        "seed, and the floor the order of floating-point reductions alone causes (the worst of "
        "single-rank runs with reordered reductions). The verdicts are `ringscale-stats "
        "numerics`' at k = {:g}: \"the same training\" while every quantity stays within k x "
        "max(its floor's running max, {:g} fp32 ulps of the reference), else \"diverges at step "
        "s\" naming the first quantity past it (loss, grad_norm, params). A non-finite value of "
        "the run is \"diverged at step s\", one of the reference \"no verdict\", as is a case "
        "with no steps or a series missing; where the floor's own parameter error passes {:g}% of "
        "the largest parameter, \"not decided (the floor diverges as much)\". A bf16, fp16 "
        "or fp8 case that carries its dtype's budget against fp64 and whose loss or gradient norm "
        "passes its dtype's budget against the fp64 run "
        "(from the dtype's unit roundoff, the model's depth and widest GEMM and the step; "
        "/budget64 is its largest ratio) is \"beyond the dtype's budget against fp64\": a "
        "defect the reference and the floor share cannot show against them. Where verdicts "
        "meet (seeds pooled), diverged > no verdict > beyond the dtype's budget against fp64 > "
        "not decided > the same training.\n\n",
        r.k, numerics_ulp_floor / 0x1p-24, numerics_floor_chaos * 100);
    md += render(numerics_config_table(r), output_format::md) + "\n";
    md += render(numerics_case_table(r), output_format::md);
    if (plots) {
        for (const bool divergence : {false, true}) {
            const std::string stem = divergence ? "numerics_divergence" : "numerics_loss";
            const std::string title =
                divergence ? fmt::format("divergence |loss - reference| against the step, with "
                                         "the dtype's floor and {:g} x floor",
                                         r.k)
                           : "loss against the step, each configuration and its reference";
            if (draw_panels(numerics_panels(r, divergence), title, dir, stem)) {
                pngs.push_back(stem + ".png");
                md += fmt::format("\n![{}]({}.png)\n", divergence ? "divergence" : "loss", stem);
            }
        }
        md += "\nOne panel per dtype; a gap in a line is a non-finite value (a dashed marker "
              "names the step where it diverged); steps where the loss equals the reference "
              "are not drawn on the divergence's axis.\n";
    }
    md += fmt::format("\n{}.\n", r.count_line());
    return md;
}

} // namespace ringscale::analysis
