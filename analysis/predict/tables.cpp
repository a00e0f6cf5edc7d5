#include "tables.hpp"

#include "analysis/presentation/views.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace ringscale::analysis::predict {

namespace {

cell band_cell(double lo, double hi) {
    return number_cell(lo, format_interval(lo, hi, true));
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

/// The marked cases left out, if any ("; N marked case(s) left out (...)").
std::string marked_part(const validation_summary& sum) {
    if (sum.marked == 0)
        return "";
    // Marked cases without a calibrated band (collectives) have no coverage or width to show.
    const std::string band = std::isfinite(sum.marked_median_width)
                                 ? fmt::format("coverage {:.0f}%, median band width {:.2f}x",
                                               100 * sum.marked_coverage, sum.marked_median_width)
                                 : std::string("no calibrated band");
    return fmt::format("; {} marked case(s) left out (measured on a contended machine or while "
                       "the sentinel drifted: median |error| {:.1f}%, {})",
                       sum.marked, 100 * sum.marked_median_abs_error, band);
}

} // namespace

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
        r.push_back(p.band_note.empty() ? band_cell(p.lo, p.hi) : text_cell("not calibrated"));
        r.push_back(number_cell(p.hi, ""));
        r.push_back(
            number_cell(100 * s.ideal_s / total, fmt::format("{:.1f}", 100 * s.ideal_s / total)));
        r.push_back(mib_cell(s.memory_bytes));
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
    std::vector<double> abs_err, signed_err, widths, marked_err, marked_widths;
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
            signed_err.push_back(e);
            inside += in;
            sum.unbanded += !p.band_note.empty();
            if (p.lo > 0 && std::isfinite(p.hi))
                widths.push_back(p.hi / p.lo);
        } else {
            marked_err.push_back(std::abs(e));
            marked_inside += in;
            if (p.lo > 0 && std::isfinite(p.hi))
                marked_widths.push_back(p.hi / p.lo);
        }
        const auto [name, share] = dominant(p.point.time);
        const bool banded = p.band_note.empty();
        r.insert(r.end(),
                 {time_cell(v), banded ? band_cell(p.lo, p.hi) : text_cell("not calibrated"),
                  number_cell(p.hi, ""), number_cell(100 * e, fmt::format("{:+.1f}", 100 * e)),
                  text_cell(banded ? (in ? "yes" : "no") : "-"),
                  text_cell(fmt::format("{} {:.0f}%", name, 100 * share)),
                  p.mark.empty() ? cell{"", nullptr} : text_cell(p.mark)});
        t.rows.push_back(r);
    }
    sum.cases = abs_err.size();
    const std::size_t banded = abs_err.size() - sum.unbanded;
    sum.coverage = banded == 0 ? unknown : static_cast<double>(inside) / banded;
    sum.covered = inside;
    sum.median_signed_error = signed_err.empty() ? unknown : median_inplace(signed_err);
    sum.median_abs_error = abs_err.empty() ? unknown : median_inplace(abs_err);
    sum.median_width = widths.empty() ? unknown : median_inplace(widths);
    sum.marked = marked_err.size();
    sum.marked_coverage =
        marked_err.empty() ? unknown : static_cast<double>(marked_inside) / marked_err.size();
    sum.marked_median_abs_error = marked_err.empty() ? unknown : median_inplace(marked_err);
    sum.marked_median_width = marked_widths.empty() ? unknown : median_inplace(marked_widths);
    return t;
}

std::string summary_line(const validation_summary& sum, double level) {
    if (sum.cases == 0)
        return "no unmarked held-out case to judge the predictions by" + marked_part(sum);
    const std::size_t banded = sum.cases - sum.unbanded;
    const std::string unbanded =
        sum.unbanded == 0 ? ""
                          : fmt::format("; {} case(s) without a calibrated band (collectives: no "
                                        "held-out error of the link figures)",
                                        sum.unbanded);
    if (banded == 0)
        return fmt::format("median |error| {:.1f}% over {} cases; median signed error {:+.1f}%",
                           100 * sum.median_abs_error, sum.cases, 100 * sum.median_signed_error) +
               unbanded + marked_part(sum);
    const auto [lo, hi] = proportion_interval(sum.covered, banded, coverage_ci_level);
    return fmt::format("median |error| {:.1f}% over {} cases; {:g}% band coverage {:.0f}% ({} of "
                       "{}, {:g}% CI {:.0f}-{:.0f}%); median band width {:.2f}x (upper/lower); "
                       "median signed error {:+.1f}%",
                       100 * sum.median_abs_error, sum.cases, 100 * level, 100 * sum.coverage,
                       sum.covered, banded, 100 * coverage_ci_level, 100 * lo, 100 * hi,
                       sum.median_width, 100 * sum.median_signed_error) +
           unbanded + marked_part(sum);
}

std::pair<double, double> proportion_interval(std::size_t k, std::size_t n, double level) {
    using b = boost::math::binomial_distribution<double>;
    const double a = (1 - level) / 2, kk = static_cast<double>(k), nn = static_cast<double>(n);
    return {b::find_lower_bound_on_p(nn, kk, a), b::find_upper_bound_on_p(nn, kk, a)};
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
