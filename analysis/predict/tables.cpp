#include "tables.hpp"

#include "analysis/presentation/views.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace ringscale::analysis::predict {

namespace {

cell time_cell(double s) {
    return number_cell(s, format_time(s));
}

cell band_cell(double lo, double hi) {
    return number_cell(lo, format_interval(lo, hi, true));
}

cell mib_cell(double bytes) {
    return number_cell(bytes / (1 << 20), fmt::format("{:.1f}", bytes / (1 << 20)));
}

/// Identity fields that say how, not what: left out of labels.
bool quiet_field(const std::string& k) {
    return k == "device" || k == "comm" || k == "threads" || k == "steps_validate" || k == "lr" ||
           k == "scaling" || k == "tf32" || k == "profile" || k == "attn_kernel";
}

/// Row labels "job/variant k=v ..."; tokens every row of a job shares go to the caption
/// ("job: k=v ...") when the table has two or more rows.
std::vector<std::string> labels(const std::vector<predicted>& rows, std::string& caption) {
    std::map<std::string, std::map<std::string, std::size_t>> count; // job -> token -> rows
    std::map<std::string, std::size_t> per_job;
    std::vector<std::vector<std::string>> tokens;
    for (const predicted& p : rows) {
        tokens.emplace_back();
        for (const auto& [k, v] : p.t.identity)
            if (!quiet_field(k))
                tokens.back().push_back(k + "=" + v);
        for (const std::string& s : tokens.back())
            ++count[p.t.job][s];
        ++per_job[p.t.job];
    }
    auto common = [&](const std::string& job, const std::string& s) {
        return rows.size() > 1 && per_job[job] > 1 && count[job][s] == per_job[job];
    };
    caption.clear();
    for (const auto& [job, tok] : count) {
        std::string shared;
        for (const auto& [s, n] : tok)
            if (common(job, s))
                shared += " " + s;
        if (!shared.empty())
            caption += (caption.empty() ? "common to the rows of " : "; ") + job + ":" + shared;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        std::string l = rows[i].t.job + "/" + rows[i].t.variant;
        for (const std::string& s : tokens[i])
            if (!common(rows[i].t.job, s))
                l += " " + s;
        out.push_back(l);
    }
    return out;
}

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
                           "modelled as two",
                           std::exp(q.one_regime_max_abs), format_bytes(q.one_regime_worst_bytes));
    else if (q.max_abs > std::log(2.0))
        out += fmt::format("; {:.3g}x off at {}: a regime change not modelled (4 sizes or more "
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

std::string short_label(const target& t) {
    std::string caption;
    return labels({predicted{t, {}, 0, unknown, unknown}}, caption).front();
}

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

table prediction_table(const std::vector<predicted>& rows, const hardware_profile* hw,
                       double level) {
    table t;
    t.add_column("case", "case");
    t.add_column("P", "world_size");
    t.add_column("nodes x ranks", "placement");
    t.add_column("predicted", "predicted_s");
    t.add_column(fmt::format("{:g}% band", 100 * level), "band_lo_s");
    t.add_column("", "band_hi_s", true);
    t.add_column(hw ? fmt::format("efficiency % (of the assumed {:g}x peak)", hw->efficiency)
                    : std::string("efficiency %"),
                 "efficiency_pct");
    t.add_column("memory/rank MiB", "memory_mib");
    t.add_column("fits", "fits");
    t.add_column("dominant", "dominant");
    t.add_column("note", "note");
    const std::vector<std::string> names = labels(rows, t.caption);
    t.caption +=
        std::string(t.caption.empty() ? "" : "; ") +
        "efficiency %: the case's compute over P ranks with no communication, imbalance "
        "or jitter, over the predicted step time" +
        (hw ? fmt::format(", both at the assumed {:g} x the device's peak rate", hw->efficiency)
            : std::string(", both at the rates calibrated on CALIB"));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const predicted& p = rows[i];
        const step_prediction& s = p.point;
        std::vector<cell> r = {
            text_cell(names[i]), int_cell(p.t.where.world),
            text_cell(fmt::format("{} x {}", p.t.where.nodes, p.t.where.ranks_per_node))};
        if (!s.ok()) {
            for (int k = 0; k < 7; ++k)
                r.push_back({"-", nullptr});
            r.push_back(text_cell(s.refusal));
            t.rows.push_back(r);
            continue;
        }
        const double total = s.time.total();
        const auto [name, share] = dominant(s.time);
        const double cap = hw ? hw->device_memory_gib * (1u << 30) : unknown;
        r.push_back(time_cell(total));
        r.push_back(band_cell(p.lo, p.hi));
        r.push_back(number_cell(p.hi, ""));
        r.push_back(
            number_cell(100 * s.ideal_s / total, fmt::format("{:.1f}", 100 * s.ideal_s / total)));
        r.push_back(s.memory_bytes > 0 ? mib_cell(s.memory_bytes) : cell{"-", nullptr});
        r.push_back(text_cell(std::isfinite(cap) && s.memory_bytes > 0
                                  ? (s.memory_bytes <= cap ? "yes" : "no")
                                  : "-"));
        r.push_back(text_cell(fmt::format("{} {:.0f}%", name, 100 * share)));
        r.push_back(text_cell(""));
        t.rows.push_back(r);
    }
    return t;
}

table validation_table(const std::vector<predicted>& rows, double level, validation_summary& sum) {
    table t;
    t.add_column("case", "case");
    t.add_column("P", "world_size");
    t.add_column("measured", "measured_s");
    t.add_column("predicted", "predicted_s");
    t.add_column(fmt::format("{:g}% band", 100 * level), "band_lo_s");
    t.add_column("", "band_hi_s", true);
    t.add_column("error %", "error_pct");
    t.add_column("in band", "in_band");
    t.add_column("dominant", "dominant");
    t.add_column("machine", "machine_marks");
    t.prune_for_people = true;
    const std::vector<std::string> names = labels(rows, t.caption);
    std::vector<double> abs_err, widths, marked_err;
    std::size_t inside = 0, marked_inside = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const predicted& p = rows[i];
        const double m = measured_median(p.t);
        std::vector<cell> r = {text_cell(names[i]), int_cell(p.t.where.world), time_cell(m)};
        if (!p.point.ok() || !(m > 0)) {
            r.insert(r.end(), {{"-", nullptr},
                               {"-", nullptr},
                               {"-", nullptr},
                               {"-", nullptr},
                               {"-", nullptr},
                               text_cell(p.point.refusal),
                               text_cell(p.mark)});
            t.rows.push_back(r);
            continue;
        }
        const double v = p.point.time.total(), e = v / m - 1;
        const bool in = m >= p.lo && m <= p.hi;
        if (p.mark.empty()) {
            abs_err.push_back(std::abs(e));
            inside += in;
            if (p.lo > 0 && std::isfinite(p.hi))
                widths.push_back(p.hi / p.lo);
        } else {
            marked_err.push_back(std::abs(e));
            marked_inside += in;
        }
        const auto [name, share] = dominant(p.point.time);
        r.insert(r.end(), {time_cell(v), band_cell(p.lo, p.hi), number_cell(p.hi, ""),
                           number_cell(100 * e, fmt::format("{:+.1f}", 100 * e)),
                           text_cell(in ? "yes" : "no"),
                           text_cell(fmt::format("{} {:.0f}%", name, 100 * share)),
                           p.mark.empty() ? cell{"", nullptr} : text_cell(p.mark)});
        t.rows.push_back(r);
    }
    sum.cases = abs_err.size();
    sum.coverage = abs_err.empty() ? unknown : static_cast<double>(inside) / abs_err.size();
    sum.median_abs_error = abs_err.empty() ? unknown : median_inplace(abs_err);
    sum.median_width = widths.empty() ? unknown : median_inplace(widths);
    sum.marked = marked_err.size();
    sum.marked_coverage =
        marked_err.empty() ? unknown : static_cast<double>(marked_inside) / marked_err.size();
    sum.marked_median_abs_error = marked_err.empty() ? unknown : median_inplace(marked_err);
    return t;
}

std::string summary_line(const validation_summary& sum, double level) {
    std::string out =
        sum.cases == 0
            ? std::string("no unmarked held-out case to judge the predictions by")
            : fmt::format(
                  "median |error| {:.1f}% over {} cases; {:g}% band coverage {:.0f}%; median "
                  "band width {:.2f}x (upper/lower)",
                  100 * sum.median_abs_error, sum.cases, 100 * level, 100 * sum.coverage,
                  sum.median_width);
    if (sum.marked > 0)
        out +=
            fmt::format("; {} marked case(s) left out (measured on a contended machine or "
                        "while the sentinel drifted: median |error| {:.1f}%, coverage {:.0f}%)",
                        sum.marked, 100 * sum.marked_median_abs_error, 100 * sum.marked_coverage);
    return out;
}

table memory_table(const std::vector<predicted>& rows) {
    table t;
    t.add_column("case", "case");
    t.add_column("P", "world_size");
    t.add_column("measured peak MiB", "measured_mib");
    t.add_column("formula MiB", "formula_mib");
    t.add_column("measured / formula", "ratio");
    t.add_column("memory", "kind");
    const std::vector<std::string> names = labels(rows, t.caption);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const predicted& p = rows[i];
        if (!p.t.measured || !p.point.ok() || !(p.point.memory_bytes > 0))
            continue;
        double peak = 0;
        const bool dev = p.point.memory_kind == "device";
        for (const case_data* l : p.t.measured->launches) {
            const auto step = l->max_memory("step_peak_device_bytes");
            const auto v = dev ? (step ? step : l->max_memory("peak_device_bytes"))
                               : l->max_memory("peak_host_bytes");
            peak = std::max(peak, v.value_or(0));
        }
        if (peak <= 0)
            continue;
        const double ratio = peak / p.point.memory_bytes;
        t.rows.push_back({text_cell(names[i]), int_cell(p.t.where.world), mib_cell(peak),
                          mib_cell(p.point.memory_bytes),
                          number_cell(ratio, fmt::format("{:.3f}", ratio)),
                          text_cell(p.point.memory_kind)});
    }
    return t;
}

} // namespace ringscale::analysis::predict
