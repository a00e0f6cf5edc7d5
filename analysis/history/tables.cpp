#include "tables.hpp"

#include "src/base/parse.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis::history {

namespace {

cell percent_cell(double fraction) {
    return number_cell(100 * fraction,
                       std::isnan(fraction) ? "-" : fmt::format("{:+.1f}%", 100 * fraction));
}

cell seconds_cell(double s) {
    return number_cell(s, std::isnan(s) ? "-" : format_seconds(s));
}

cell ci_text(const estimate& e) {
    if (std::isnan(e.lo))
        return text_cell("- (< 6 launches)");
    return text_cell(fmt::format("{} .. {}", format_seconds(e.lo), format_seconds(e.hi)));
}

std::string state_of(const series& s) {
    if (s.changes.empty())
        return "steady";
    const found_change& last = s.changes.back();
    return fmt::format("{} since #{} ({:+.1f}%, {}; {})", last.change() > 0 ? "slower" : "faster",
                       last.index + 1, 100 * last.change(), last.moved, last.verdict_line());
}

} // namespace

table change_table(const series_set& set) {
    table t;
    t.caption = "Change points of each series (capped deviations about the medians, permutation "
                "test; launch # counts from 1 in the series' order; verdict: the decision rule)";
    // At 160 columns the series, its launch, the change, the phase that moved, the verdict
    // and what moved with it (last: never cut, stated in full above where long) stay; the
    // CIs, labels, date, medians and p are left out first.
    t.add_column("series", "series");
    t.add_column("launch", "launch");
    t.add_column("change", "change_pct");
    t.add_column("moved", "moved");
    t.add_column("verdict", "verdict");
    t.add_column("environment", "environment");
    t.add_column("date (UTC)", "date_utc");
    t.add_column("labels", "labels");
    t.add_column("file", "file", true);
    t.add_column("before", "before_s");
    t.add_column("before 95% CI", "before_ci");
    t.add_column("after", "after_s");
    t.add_column("after 95% CI", "after_ci");
    t.add_column("p", "p");
    for (const char* phase : {"compute", "communication", "wait", "memory"})
        t.add_column(fmt::format("{} change", phase), fmt::format("{}_change_pct", phase), true);
    t.add_column("with it", "moved_with");
    t.fit_drop_first = {"before 95% CI", "after 95% CI", "labels", "date (UTC)",
                        "before",        "after",        "p",      "environment"};
    for (const series& s : set.all)
        for (const found_change& f : s.changes) {
            const launch_record& l = *s.points[f.index].launch;
            std::vector<cell> row = {
                text_cell(s.label),
                text_cell(fmt::format("#{} of {}", f.index + 1, s.points.size())),
                percent_cell(f.change()),
                text_cell(f.moved),
                text_cell(f.verdict_line()),
                text_cell(s.env),
                text_cell(format_utc(l.time_s)),
                text_cell(labels_text(l)),
                text_cell(l.path),
                seconds_cell(f.before.value),
                ci_text(f.before),
                seconds_cell(f.after.value),
                ci_text(f.after),
                number_cell(f.p, fmt::format("{:.3f}", f.p))};
            for (const phase_shift& p : f.phases)
                row.push_back(percent_cell(p.change()));
            row.push_back(text_cell(f.with.empty() ? "-" : f.with));
            t.rows.push_back(std::move(row));
        }
    return t;
}

table series_table(const series_set& set) {
    table t;
    t.caption =
        "Each series now (noise: launch-to-launch CV, robust; detectable: the smallest "
        "step the method finds with 90% power; marked: launches measured on a marked machine)";
    t.add_column("series", "series");
    t.add_column("environment", "environment");
    t.add_column("launches", "launches");
    t.add_column("marked", "marked");
    t.add_column("newest (UTC)", "newest_utc");
    t.add_column("newest median", "newest_s");
    t.add_column("noise", "noise_pct");
    t.add_column("detectable", "detectable_pct");
    t.add_column("changes", "changes");
    t.add_column("state", "state");
    for (const series& s : set.all) {
        const series_point* newest = s.points.empty() ? nullptr : &s.points.back();
        t.rows.push_back(
            {text_cell(s.label), text_cell(s.env),
             int_cell(static_cast<long long>(s.points.size())),
             int_cell(static_cast<long long>(s.marked)),
             text_cell(newest ? format_utc(newest->launch->time_s) : "-"),
             seconds_cell(newest ? newest->c->step_s : std::nan("")),
             number_cell(100 * s.noise,
                         std::isnan(s.noise) ? "-" : fmt::format("{:.1f}%", 100 * s.noise)),
             number_cell(100 * s.detectable, std::isnan(s.detectable)
                                                 ? "- (too few launches)"
                                                 : fmt::format("{:.1f}%", 100 * s.detectable)),
             int_cell(static_cast<long long>(s.changes.size())), text_cell(state_of(s))});
    }
    return t;
}

} // namespace ringscale::analysis::history
