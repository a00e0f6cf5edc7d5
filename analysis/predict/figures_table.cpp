// The figures table of `ringscale-stats predict`: every figure a prediction rests on, its
// value and band, where it comes from and how well it fits what it was fitted on; then the
// model's error, its bias by leave-one-P-out and the bands' coverage of those cases.
#include "tables.hpp"

#include "analysis/presentation/views.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include "src/base/parse.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis::predict {

namespace {

/// value, percentile band of the replicates' values, as text with `unit`.
std::vector<cell> figure_row(const std::string& name, double value, std::vector<double> reps,
                             double level, const char* unit, const std::string& source,
                             const std::string& fit = "-") {
    const auto fmt_v = [&](double v) { return fmt::format("{:.4g} {}", v, unit); };
    std::vector<double> finite;
    for (double r : reps)
        if (std::isfinite(r))
            finite.push_back(r);
    cell band{"-", nullptr};
    if (finite.size() >= 2) {
        const interval b = percentile_interval(finite, level);
        band = number_cell(b.lo, fmt::format("[{:.4g}, {:.4g}]", b.lo, b.hi));
    }
    // A rate whose fitted cost is 0 s: the cases show no cost of that kind.
    const cell shown_value = std::isfinite(value) ? number_cell(value, fmt_v(value))
                             : value > 0          ? cell{"no measurable cost", nullptr}
                                                  : cell{"not calibrated", nullptr};
    return {text_cell(name), shown_value, band, text_cell(source), text_cell(fit)};
}

/// A log ratio as a percentage off: |measured / fitted - 1|.
double pct_off(double abs_log) {
    return 100 * std::expm1(abs_log);
}

/// How well a fit matches the rows it was fitted on, in a cell: "median 4%, worst 12% over
/// 18 cases"; a link fit names its sizes and the worst one, and a regime change.
std::string fit_text(const fit_quality& q, bool link) {
    if (q.rows == 0)
        return "-";
    if (!link)
        return fmt::format("median {:.0f}%, worst {:.0f}% over {} cases", pct_off(q.median_abs),
                           pct_off(q.max_abs), q.rows);
    std::string out =
        fmt::format("median {:.0f}%, worst {:.0f}% at {}, over {}-{} ({} sizes)",
                    pct_off(q.median_abs), pct_off(q.max_abs), format_bytes(q.worst_bytes),
                    format_bytes(q.min_bytes), format_bytes(q.max_bytes), q.sizes);
    if (std::isfinite(q.one_regime_max_abs))
        out += fmt::format("; one alpha and beta were {:.3g}x off at {}: a regime change, "
                           "modelled as two{}",
                           std::exp(q.one_regime_max_abs), format_bytes(q.one_regime_worst_bytes),
                           q.upper_sizes == 1 ? " (the upper from its one size: its busbw, "
                                                "the lower alpha)"
                                              : "");
    else if (q.max_abs > std::log(2.0))
        out += fmt::format("; {:.3g}x off at {}: a regime change not modelled (3 sizes or more "
                           "needed)",
                           std::exp(q.max_abs), format_bytes(q.worst_bytes));
    return out;
}

/// Figures as people read them: rates in G/s, times in us.
double shown(double s_per_unit, double scale) {
    return s_per_unit > 0 ? scale / s_per_unit : s_per_unit == 0 ? INFINITY : unknown;
}

void add_compute_rows(table& t, const calibration& point, const std::vector<calibration>& reps,
                      double level) {
    struct item {
        const char* name;
        double compute_figures::*member;
        double scale;
        const char* unit;
    };
    const item items[] = {{"attention rate", &compute_figures::s_per_attn_flop, 1e-9, "GFLOP/s"},
                          {"GEMM rate", &compute_figures::s_per_gemm_flop, 1e-9, "GFLOP/s"},
                          {"memory-bound rate", &compute_figures::s_per_mem_byte, 1e-9, "GB/s"},
                          {"per-call overhead", &compute_figures::s_per_call, 0, "us"}};
    for (const auto& [dev, cf] : point.compute)
        for (const item& it : items) {
            auto value = [&](const compute_figures& c) {
                const double s = c.*(it.member);
                return it.scale == 0 ? s * 1e6 : shown(s, it.scale);
            };
            std::vector<double> r;
            for (const calibration& c : reps)
                if (c.compute.count(dev))
                    r.push_back(value(c.compute.at(dev)));
            const auto q = point.compute_quality.find(dev);
            t.rows.push_back(
                figure_row(fmt::format("{}, {} (per core-equivalent)", it.name, dev), value(cf), r,
                           level, it.unit, "calibrated",
                           q == point.compute_quality.end() ? "-" : fit_text(q->second, false)));
        }
    for (const auto& [dev, j] : point.rank_jitter) {
        std::vector<double> r;
        for (const calibration& c : reps)
            if (c.rank_jitter.count(dev))
                r.push_back(c.rank_jitter.at(dev));
        t.rows.push_back(figure_row(fmt::format("rank-to-rank compute jitter (SD of log), {}", dev),
                                    j, r, level, "", "calibrated"));
    }
    for (const auto& [dev, eta] : point.thread_efficiency) {
        std::vector<double> r;
        for (const calibration& c : reps)
            if (c.thread_efficiency.count(dev))
                r.push_back(c.thread_efficiency.at(dev));
        t.rows.push_back(figure_row(fmt::format("speed-up per extra thread, {}", dev), eta, r,
                                    level, "", "calibrated"));
    }
}

void add_link_rows(table& t, const calibration& point, const std::vector<calibration>& reps,
                   double level) {
    for (link_level lv : {link_level::intra, link_level::inter}) {
        const auto l = static_cast<std::size_t>(lv);
        // One regime's pair of rows; `bytes` picks the regime (the replicates' at that size).
        auto pair = [&](const std::string& what, const link_figures& lf, double bytes,
                        const std::function<link_figures(const calibration&)>& get,
                        const std::string& fit) {
            std::vector<double> a, b;
            for (const calibration& c : reps) {
                a.push_back(get(c).at(bytes).alpha_s * 1e6);
                b.push_back(get(c).at(bytes).beta_bps / 1e9);
            }
            const link_figures r = lf.at(bytes);
            t.rows.push_back(figure_row(fmt::format("alpha {}{}", to_string(lv), what),
                                        r.alpha_s * 1e6, a, level, "us/step", "calibrated", fit));
            t.rows.push_back(figure_row(fmt::format("beta {}{}", to_string(lv), what),
                                        r.beta_bps / 1e9, b, level, "GB/s busbw", "calibrated",
                                        fit));
        };
        auto rows = [&](const std::string& what, const link_figures& lf,
                        const std::function<link_figures(const calibration&)>& get,
                        const fit_quality& q) {
            const std::string fit = fit_text(q, true);
            if (!lf.two_regimes())
                return pair(what, lf, 0, get, fit);
            const std::string at = format_bytes(lf.regime_bytes);
            pair(fmt::format("{} below {}", what, at), lf, 0, get, fit);
            pair(fmt::format("{} from {}", what, at), lf, lf.regime_bytes, get, fit);
        };
        rows(
            "", point.links[l], [&](const calibration& c) { return c.links[l]; },
            point.link_quality[l]);
        for (const auto& [op, lf] : point.per_op[l])
            rows(
                fmt::format(" ({})", to_string(op)), lf,
                [&, op = op](const calibration& c) {
                    const auto it = c.per_op[l].find(op);
                    return it == c.per_op[l].end() ? link_figures{} : it->second;
                },
                point.per_op_quality[l].count(op) ? point.per_op_quality[l].at(op) : fit_quality{});
    }
}

/// One row per collective: its shared-link congestion at the largest bytes per flow measured.
void add_congestion_rows(table& t, const calibration& point, const std::vector<calibration>& reps,
                         double level) {
    for (const auto& [key, curve] : point.congestion) {
        const auto& [bytes, factor] = curve.back();
        std::vector<double> r;
        for (const calibration& c : reps) {
            const auto it = c.congestion.find(key);
            if (it != c.congestion.end() && it->second.back().first == bytes)
                r.push_back(it->second.back().second);
        }
        t.rows.push_back(
            figure_row(fmt::format("shared-link congestion ({}{}) at {} per flow (x {:.3g} at {})",
                                   key.second == mpi_call::nonblocking ? "i" : "",
                                   to_string(key.first), format_bytes(bytes), curve.front().second,
                                   format_bytes(curve.front().first)),
                       factor, r, level, "x", "calibrated (link tests with ranks sharing a link)"));
    }
}

} // namespace

table figures_table(const calibration& point, const std::vector<calibration>& reps,
                    const hardware_profile* hw, const model_error& err, double level) {
    table t;
    t.add_column("figure", "figure");
    t.add_column("value", "value");
    t.add_column(fmt::format("{:g}% band", 100 * level), "band_lo");
    t.add_column("source", "source");
    t.add_column("fit to what it was fitted on", "fit");
    if (hw) {
        const figures f = profile_figures(*hw);
        const std::string src = fmt::format("assumed: {} ({})", hw->name, hw->source);
        t.rows.push_back(figure_row("attention and GEMM rate per device",
                                    1e-9 / f.compute.s_per_attn_flop, {}, level, "GFLOP/s", src));
        t.rows.push_back(figure_row("memory-bound rate", hw->memory_gbs, {}, level, "GB/s", src));
        t.rows.push_back(
            figure_row("per-call overhead", hw->call_overhead_us, {}, level, "us", src));
        t.rows.push_back(figure_row("alpha intra", hw->intra_alpha_us, {}, level, "us/step", src));
        t.rows.push_back(
            figure_row("beta intra", hw->intra_busbw_gbs, {}, level, "GB/s busbw", src));
        t.rows.push_back(figure_row("alpha inter", hw->inter_alpha_us, {}, level, "us/step", src));
        t.rows.push_back(
            figure_row("beta inter", hw->inter_busbw_gbs, {}, level, "GB/s busbw", src));
        t.rows.push_back(figure_row("ranks per node", hw->ranks_per_node, {}, level, "", src));
        t.rows.push_back(figure_row("NICs per node", hw->nics_per_node, {}, level, "", src));
    } else {
        add_compute_rows(t, point, reps, level);
        add_link_rows(t, point, reps, level);
        if (point.node_links > 0) {
            std::vector<double> r;
            for (const calibration& c : reps)
                r.push_back(c.node_links);
            t.rows.push_back(figure_row("links per node, shared by its ranks", point.node_links, r,
                                        level, "",
                                        "calibrated (link tests at 1 and r ranks "
                                        "per node)"));
        }
        add_congestion_rows(t, point, reps, level);
        t.rows.push_back(figure_row("node cores (CPU width)", point.node_cores, {}, level, "",
                                    "largest CPU affinity recorded"));
    }
    std::vector<double> abs_err;
    for (double e : err.log_ratio)
        abs_err.push_back(100 * std::abs(std::expm1(e)));
    t.rows.push_back(figure_row("model error |measured/predicted - 1|, median",
                                abs_err.empty() ? unknown : median_inplace(abs_err), {}, level, "%",
                                err.basis));
    for (const model_bias* b : {&err.above, &err.below})
        if (b->cases > 0)
            t.rows.push_back(
                figure_row("model bias (leave-one-P-out): measured/predicted - 1",
                           100 * std::expm1(b->log_ratio), {}, level, "%", b->text,
                           b->corrected ? "applied to targets beyond CALIB's P that way" : "-"));
    const double cover = error_coverage(err, level);
    if (std::isfinite(cover) && err.basis.rfind("leave", 0) == 0)
        t.rows.push_back(figure_row(
            fmt::format("{:g}% bands: coverage of the leave-one-P-out cases", 100 * level),
            100 * cover, {}, level, "%", err.basis, "what a held-out P's band promises"));
    return t;
}

} // namespace ringscale::analysis::predict
