#include "views.hpp"

#include "analysis/measures/resources.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

cell ratio_cell(double v, const char* spec = "{:.3f}") {
    return number_cell(v, fmt::format(fmt::runtime(spec), v));
}

cell opt_cell(const std::optional<double>& v, double scale) {
    if (!v)
        return {"-", nullptr};
    return number_cell(*v / scale, fmt::format("{:.4g}", *v / scale));
}

/// MFU in percent with one decimal ("-" when not known).
cell mfu_cell(const std::optional<double>& percent) {
    if (!percent)
        return {"-", nullptr};
    // Tiny shares (a CPU against --peak) keep two significant digits instead of "0.0".
    const std::string spec = *percent < 0.1 ? "{:.2g}" : "{:.1f}";
    return number_cell(*percent, fmt::format(fmt::runtime(spec), *percent));
}

/// Shared parameters of the given cases, and the caption naming them.
param_list shared(const std::vector<const pooled_case*>& cases, table& t) {
    const param_list common = common_params(cases);
    if (!common.empty()) {
        std::string text = "common to all rows:";
        for (const auto& [k, v] : common)
            text += fmt::format(" {}={}", k, v);
        t.caption = text;
    }
    return common;
}

/// Short label in text and md, the full label in csv and json.
cell label_cell(const std::string& full, const param_list& common) {
    return {strip_params(full, common), full};
}

const pooled_case& base_case(const scaling_result& r) {
    for (const scaling_point& p : r.points)
        if (p.p == r.base_p)
            return *p.source;
    return *r.points.front().source;
}

/// Memory of a case in MiB (max over ranks and launches), one cell per memory_figures().
void add_memory_cells(const pooled_case& c, std::vector<cell>& row) {
    for (const memory_figure& m : memory_figures()) {
        const auto v = peak_memory(c, m.dataset);
        row.push_back(
            v ? number_cell(*v / (1024.0 * 1024.0), fmt::format("{:.1f}", *v / (1024.0 * 1024.0)))
              : cell{"-", nullptr});
    }
}

void add_memory_columns(table& t) {
    for (const memory_figure& m : memory_figures())
        t.add_column(m.title, m.key);
}

/// The cell of column `key`, or the sanity gate's flag in its place (value null: JSON and CSV
/// never carry a withheld number).
cell flagged(const case_summary& s, const std::string& key, cell c) {
    auto it = s.flags.find(key);
    return it == s.flags.end() ? c : cell{it->second, nullptr};
}

std::string status_text(const case_summary& s) {
    std::string out = s.status;
    if (!s.error.empty())
        out += ": " + s.error;
    if (s.not_ok > 0 && s.status == schema::status::ok)
        out += fmt::format(" ({} launch(es) not ok)", s.not_ok);
    if (s.incomplete)
        out += " [incomplete file]";
    if (!s.rejected.empty())
        out += " [figure withheld]";
    return out;
}

/// The verdict with the rule's reason where not decided, and the marks: weighed by their
/// effect, or with --skip-marked left out.
std::string verdict_text(const case_comparison& c) {
    std::string v = to_string(c.result);
    if (c.result == verdict::not_decided)
        v += " (" + c.reason + ")";
    if (c.result == verdict::contended)
        return fmt::format("{}: {}", v, c.marked_why);
    if (!c.note.empty())
        v += " (" + c.note + ")";
    const bool left_out = c.base->launches.size() < c.base_all->launches.size() ||
                          c.next->launches.size() < c.next_all->launches.size();
    if (c.marked_base + c.marked_new > 0 && left_out)
        v += fmt::format(" (marked launches left out: {})", c.marked_why);
    else if (c.marked_base + c.marked_new > 0)
        v += fmt::format(" (marked launches weighed: {})", c.marked_why);
    return v;
}

} // namespace

std::string size_text(double s) {
    const auto v = static_cast<long long>(std::llround(s));
    if (v >= (1 << 20) && v % (1 << 20) == 0)
        return fmt::format("{}M", v >> 20);
    if (v >= 1024 && v % 1024 == 0)
        return fmt::format("{}K", v >> 10);
    return fmt::format("{}", v);
}

std::string format_time(double s) {
    if (!std::isfinite(s))
        return "-";
    const double a = std::abs(s);
    if (a < 1e-3)
        return fmt::format("{:.4g} us", s * 1e6);
    if (a < 1.0)
        return fmt::format("{:.4g} ms", s * 1e3);
    return fmt::format("{:.4g} s", s);
}

cell time_cell(double s) {
    return number_cell(s, format_time(s));
}

cell mib_cell(double bytes) {
    return bytes > 0 ? number_cell(bytes / 1048576.0, fmt::format("{:.1f}", bytes / 1048576.0))
                     : cell{"-", nullptr};
}

std::string format_interval(double lo, double hi, bool as_time) {
    if (!std::isfinite(lo) || !std::isfinite(hi))
        return "-";
    if (as_time)
        return fmt::format("[{}, {}]", format_time(lo), format_time(hi));
    return fmt::format("[{:.3f}, {:.3f}]", lo, hi);
}

table summary_table(const std::vector<case_summary>& rows) {
    table t;
    const char* cols[][2] = {{"case", "case"},
                             {"P", "world_size"},
                             {"launches", "launches"},
                             {"n", "iterations"},
                             {"median", "median_s"},
                             {"95% CI", "ci_lo_s"},
                             {"", "ci_hi_s"},
                             {"p10", "p10_s"},
                             {"p90", "p90_s"},
                             {"p99", "p99_s"},
                             {"min", "min_s"},
                             {"mean", "mean_s"},
                             {"CV", "cv"},
                             {"outliers", "outliers"},
                             {"time imbalance", "imbalance"},
                             {"comm %", "comm_share"},
                             {"GFLOP/s/rank", "gflops_per_rank"},
                             {"MFU %", "mfu_pct"},
                             {"tokens/s", "tokens_per_s"},
                             {"algbw GB/s", "algbw_gbs"},
                             {"busbw GB/s", "busbw_gbs"}};
    for (const auto& c : cols)
        t.add_column(c[0], c[1], c[0][0] == '\0');
    add_memory_columns(t);
    t.add_column("status", "status");
    t.add_column("", "withheld", true); // csv/json: "column=flag ..." for each withheld figure
    // Launches measured on a contended machine or while the sentinel drifted.
    t.add_column("machine", "machine_marks");
    // In a terminal too narrow for every column, the spread's detail goes before the rates.
    t.fit_drop_first = {"p10", "p90", "p99", "min", "mean", "outliers"};
    std::vector<const pooled_case*> cases;
    for (const case_summary& s : rows)
        cases.push_back(s.source);
    const param_list common = shared(cases, t);
    for (const case_summary& s : rows) {
        const pooled_case& p = *s.source;
        std::string outl = std::to_string(s.outliers) + (s.outliers_removed ? " removed" : "");
        t.rows.push_back({label_cell(p.label(), common),
                          int_cell(p.world_size),
                          int_cell(s.launches),
                          int_cell(static_cast<long long>(s.n)),
                          time_cell(s.median.value),
                          number_cell(s.median.lo, format_interval(s.median.lo, s.median.hi, true)),
                          number_cell(s.median.hi, ""),
                          time_cell(s.p10),
                          time_cell(s.p90),
                          time_cell(s.p99),
                          time_cell(s.min),
                          time_cell(s.mean),
                          ratio_cell(s.cv),
                          {outl, static_cast<long long>(s.outliers)},
                          ratio_cell(s.imbalance),
                          number_cell(s.comm_share, fmt::format("{:.1f}", 100 * s.comm_share)),
                          flagged(s, "gflops_per_rank", opt_cell(s.flops_per_rank, 1e9)),
                          mfu_cell(s.mfu_percent),
                          opt_cell(s.tokens_per_s, 1),
                          flagged(s, "algbw_gbs", opt_cell(s.algbw, 1e9)),
                          flagged(s, "busbw_gbs", opt_cell(s.busbw, 1e9))});
        add_memory_cells(p, t.rows.back());
        t.rows.back().push_back(text_cell(status_text(s)));
        std::string withheld;
        for (const auto& [key, flag] : s.flags)
            withheld += fmt::format("{}{}={}", withheld.empty() ? "" : " ", key, flag);
        t.rows.back().push_back(withheld.empty() ? cell{"", nullptr} : text_cell(withheld));
        const std::string marks = marks_text(p, true); // the reason too: every view names it
        t.rows.back().push_back(marks.empty() ? cell{"", nullptr} : text_cell(marks));
    }
    t.prune_for_people = true; // CSV and JSON keep every column, whatever the data
    return t;
}

table scaling_table(const std::vector<scaling_result>& results) {
    table t;
    const char* cols[][2] = {
        {"family", "family"},  {"scaling", "scaling"},       {"base P", "base_p"},
        {"P", "world_size"},   {"median", "median_s"},       {"95% CI", "ci_lo_s"},
        {"", "ci_hi_s"},       {"speedup", "speedup"},       {"95% CI", "speedup_lo"},
        {"", "speedup_hi"},    {"efficiency", "efficiency"}, {"95% CI", "efficiency_lo"},
        {"", "efficiency_hi"}, {"Karp-Flatt", "karp_flatt"}, {"CI over", "resampled"}};
    for (const auto& c : cols)
        t.add_column(c[0], c[1], c[0][0] == '\0');
    add_memory_columns(t); // memory vs P, per rank (max over ranks)
    t.add_column("note", "note");
    std::vector<const pooled_case*> cases;
    for (const scaling_result& r : results)
        for (const scaling_point& p : r.points)
            cases.push_back(p.source);
    const param_list common = shared(cases, t);
    for (const scaling_result& r : results)
        for (const scaling_point& p : r.points) {
            t.rows.push_back(
                {label_cell(r.label, common), text_cell(r.scaling), int_cell(r.base_p),
                 int_cell(p.p), time_cell(p.time),
                 number_cell(p.time_lo, format_interval(p.time_lo, p.time_hi, true)),
                 number_cell(p.time_hi, ""), ratio_cell(p.speedup),
                 number_cell(p.speedup_lo, format_interval(p.speedup_lo, p.speedup_hi, false)),
                 number_cell(p.speedup_hi, ""), ratio_cell(p.efficiency),
                 number_cell(p.efficiency_lo,
                             format_interval(p.efficiency_lo, p.efficiency_hi, false)),
                 number_cell(p.efficiency_hi, ""),
                 p.karp_flatt_note.empty()
                     ? ratio_cell(p.karp_flatt, "{:.4f}")
                     : cell{fmt::format("{:.4f} (!)", p.karp_flatt), p.karp_flatt},
                 text_cell(p.resampled)});
            add_memory_cells(*p.source, t.rows.back());
            std::string note = superlinear_note(base_case(r), *p.source, p.efficiency);
            for (const std::string& more :
                 {p.karp_flatt_note, oversubscription_note(*p.source), marks_text(*p.source, true)})
                if (!more.empty())
                    note += (note.empty() ? "" : "; ") + more;
            t.rows.back().push_back(note.empty() ? cell{"", nullptr} : text_cell(note));
        }
    t.prune_for_people = true;
    return t;
}

table fit_table(const char* what, const char* model, const std::vector<model_row>& rows) {
    table t;
    t.add_column(what, what);
    t.add_column("points", "points");
    t.add_column(model, "formula");
    t.add_column("SMAPE %", "smape");
    t.add_column("LOO-CV SMAPE %", "cv_smape");
    t.add_column("R^2", "r2");
    for (const model_row& m : rows)
        t.rows.push_back({text_cell(m.label), int_cell(static_cast<long long>(m.points)),
                          text_cell(m.formula), ratio_cell(m.smape, "{:.2f}"),
                          ratio_cell(m.cv_smape, "{:.2f}"), ratio_cell(m.r2, "{:.4f}")});
    return t;
}

table predictions_table(const char* what, bool with_s, const std::vector<prediction_row>& rows) {
    table t;
    t.add_column(what, what);
    t.add_column("P", "world_size");
    if (with_s)
        t.add_column("S", "seq_len");
    t.add_column("predicted", "predicted_s");
    t.add_column("95% band", "band_lo_s");
    t.add_column("", "band_hi_s", true);
    t.add_column("extrapolated", "extrapolated");
    for (const prediction_row& r : rows) {
        std::vector<cell> row = {text_cell(r.label), int_cell(static_cast<long long>(r.p))};
        if (with_s)
            row.push_back(r.s.value_or(cell{"", nullptr}));
        if (!r.refusal.empty()) // beyond what the data supports: no number
            row.insert(row.end(), {cell{"-", nullptr}, cell{"-", nullptr}, cell{"", nullptr},
                                   text_cell(r.refusal)});
        else
            row.insert(row.end(),
                       {time_cell(r.value), number_cell(r.lo, format_interval(r.lo, r.hi, true)),
                        number_cell(r.hi, ""), text_cell(r.extrapolated)});
        t.rows.push_back(std::move(row));
    }
    return t;
}

table model_table(const std::vector<family_model>& models) {
    std::vector<model_row> rows;
    for (const auto& m : models)
        rows.push_back(
            {m.label, m.p.size(), m.fit.formula(), m.fit.smape, m.fit.cv_smape, m.fit.r2});
    return fit_table("family", "model t(p) [s]", rows);
}

table prediction_table(const std::vector<family_model>& models) {
    std::vector<prediction_row> rows;
    for (const auto& m : models)
        for (const auto& pr : m.predictions) {
            const double pmax = *std::max_element(m.p.begin(), m.p.end());
            rows.push_back(
                {m.label, pr.p, std::nullopt, pr.value, pr.lo, pr.hi,
                 pr.p > pmax ? fmt::format("yes ({:g}x beyond data)", pr.p / pmax) : "no",
                 pr.refusal});
        }
    return predictions_table("family", false, rows);
}

table compare_table(const comparison& cmp) {
    table t;
    const char* cols[][2] = {{"case", "case"},
                             {"P", "world_size"},
                             {"base median", "base_median_s"},
                             {"new median", "new_median_s"},
                             {"change %", "change_pct"},
                             {"95% CI", "change_lo_pct"},
                             {"", "change_hi_pct"},
                             {"unit", "unit"},
                             {"n base", "n_base"},
                             {"n new", "n_new"},
                             {"p", "p_value"},
                             {"p Holm", "p_holm"},
                             {"p MWU iter.", "p_mwu_iterations"},
                             {"Cliff's d", "cliffs_delta"},
                             {"effect", "effect"},
                             {"launch CV %", "launch_cv_pct"},
                             {"detectable %", "detectable_pct"},
                             {"verdict", "verdict"}};
    for (const auto& c : cols)
        t.add_column(c[0], c[1], c[0][0] == '\0');
    std::vector<const pooled_case*> cases;
    for (const case_comparison& c : cmp.matched)
        cases.push_back(c.base);
    const param_list common = shared(cases, t);
    auto pct = [](double v) { return number_cell(100 * v, fmt::format("{:+.2f}", 100 * v)); };
    auto p_cell = [](double v) { return number_cell(v, fmt::format("{:.3g}", v)); };
    auto maybe_pct = [](double v) {
        return std::isfinite(v) ? number_cell(100 * v, fmt::format("{:.1f}", 100 * v))
                                : text_cell("-");
    };
    const cell none{"-", nullptr};
    for (const case_comparison& c : cmp.matched) {
        // A row with nothing compared (every launch of a side left out) has no CI and no p;
        // an undecided row names no effect size.
        const bool compared = c.unit != "none";
        const bool decided = c.result != verdict::not_decided && c.result != verdict::contended;
        t.rows.push_back(
            {label_cell(c.base->label(), common), int_cell(c.base->world_size),
             time_cell(c.base_median), time_cell(c.new_median), pct(c.change),
             compared
                 ? number_cell(100 * c.change_lo, fmt::format("[{:+.2f}, {:+.2f}]",
                                                              100 * c.change_lo, 100 * c.change_hi))
                 : none,
             compared ? number_cell(100 * c.change_hi, "") : cell{"", nullptr}, text_cell(c.unit),
             int_cell(static_cast<long long>(c.n_base)), int_cell(static_cast<long long>(c.n_new)),
             compared ? p_cell(c.p_value) : none, compared ? p_cell(c.p_adjusted) : none,
             compared ? p_cell(c.test.p_value) : none,
             compared ? ratio_cell(c.test.cliffs_delta) : none,
             decided ? text_cell(cliffs_delta_label(c.test.cliffs_delta)) : none,
             maybe_pct(c.launch_noise), maybe_pct(c.detectable), text_cell(verdict_text(c))});
    }
    return t;
}

} // namespace ringscale::analysis
