#include "report_summary.hpp"

#include "html_history.hpp"

#include "analysis/history/records.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace ringscale::analysis {

namespace {

/// Lines as a list, at most `max` of them, then how many more the section `more` holds.
std::string capped(const std::vector<std::string>& lines, std::size_t max, const char* more) {
    std::string md;
    for (std::size_t i = 0; i < lines.size() && i < max; ++i)
        md += "- " + lines[i] + "\n";
    if (lines.size() > max)
        md += fmt::format("- ... and {} more: see {}\n", lines.size() - max, more);
    return md;
}

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < s.size()) {
        const std::size_t end = std::min(s.find(' ', at), s.size());
        if (end > at)
            out.push_back(s.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

/// The words ("k=v") every label holds, in the first label's order.
std::vector<std::string> common_words(const std::vector<std::string>& labels) {
    std::vector<std::string> common;
    if (labels.empty())
        return common;
    for (const std::string& w : words(labels.front()))
        if (std::all_of(labels.begin() + 1, labels.end(), [&](const std::string& l) {
                const auto ws = words(l);
                return std::find(ws.begin(), ws.end(), w) != ws.end();
            }))
            common.push_back(w);
    return common;
}

/// The words of `label` that are not in `common`, space-joined.
std::string varying_words(const std::string& label, const std::vector<std::string>& common) {
    std::string out;
    for (const std::string& w : words(label))
        if (std::find(common.begin(), common.end(), w) == common.end())
            out += (out.empty() ? "" : " ") + w;
    return out;
}

std::string joined(const std::vector<std::string>& ws) {
    std::string out;
    for (const std::string& w : ws)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

/// "S=1K" as typed on the command line where S is whole.
std::string seq_text(double s) {
    if (s > 0 && s < 1e18 && std::floor(s) == s)
        return "S=" + format_size(static_cast<std::uint64_t>(s));
    return fmt::format("S={:g}", s);
}

/// One answer per (S, P): "S=1K, P=2: ring/zigzag +22.7% [...] over ring/contiguous: not
/// decided (within noise)"; a scheme is called fastest only where the decision rule confirmed
/// it. The fields every line shares are said once above the lines.
std::string scheme_lines(const crossover_result& r, std::size_t max) {
    std::vector<const crossover_cell*> cells;
    std::vector<std::string> shapes;
    for (const crossover_cell& c : r.cells)
        if (!c.same_work && c.schemes.size() >= 2) {
            cells.push_back(&c);
            shapes.push_back(c.shape);
        }
    if (cells.empty())
        return "";
    const std::vector<std::string> common = common_words(shapes);
    std::vector<std::string> lines;
    for (const crossover_cell* c : cells) {
        const std::string rest = varying_words(c->shape, common);
        const bool decided = c->verdict == "confirmed";
        lines.push_back(fmt::format(
            "{}, P={}{}: {} {:+.1f}% [{:+.1f}%, {:+.1f}%] over {}: {}", seq_text(c->seq_len),
            c->world_size, rest.empty() ? "" : " (" + markdown_text(rest) + ")",
            decided ? "**" + markdown_text(c->schemes[0].scheme) + "** fastest,"
                    : markdown_text(c->schemes[0].scheme),
            100 * c->margin, 100 * c->margin_lo, 100 * c->margin_hi,
            markdown_text(c->schemes[1].scheme), markdown_text(c->verdict)));
    }
    std::string md = "\nSchemes per (S, P), the first against the runner-up";
    md += common.empty() ? ":\n\n" : "; every line has " + markdown_text(joined(common)) + ":\n\n";
    return md + capped(lines, max, "Crossovers");
}

std::string efficiency_lines(const std::vector<scaling_result>& scaling, std::size_t max) {
    std::vector<const scaling_result*> results;
    std::vector<std::string> labels;
    for (const scaling_result& r : scaling)
        if (!r.points.empty()) {
            results.push_back(&r);
            labels.push_back(r.label);
        }
    if (results.empty())
        return "";
    const std::vector<std::string> common = common_words(labels);
    std::vector<std::string> lines;
    for (const scaling_result* r : results) {
        const scaling_point& p = *std::max_element(
            r->points.begin(), r->points.end(),
            [](const scaling_point& a, const scaling_point& b) { return a.p < b.p; });
        const std::string rest = varying_words(r->label, common);
        lines.push_back(fmt::format("{}{} efficiency {:.2f} [{:.2f}, {:.2f}] at P={} (base P={})",
                                    rest.empty() ? "" : markdown_text(rest) + ": ",
                                    markdown_text(r->scaling), p.efficiency, p.efficiency_lo,
                                    p.efficiency_hi, p.p, r->base_p));
    }
    std::string md = "\nScaling efficiency at the largest P";
    md += common.empty() ? ":\n\n" : "; every line has " + markdown_text(joined(common)) + ":\n\n";
    return md + capped(lines, max, "Scaling");
}

/// The regressed series, one line per cause: the series that slowed at the same launch time,
/// in the same phase, with the same things moving with it.
std::string regression_lines(const history::series_set& set, std::size_t max) {
    struct cause {
        std::size_t series = 0;
        std::size_t launch = 0; ///< its number in the series, 0 when the series differ
        double lo = 0, hi = 0;  ///< the changes' range
    };
    std::map<std::tuple<std::string, std::string, std::string>, cause> causes;
    std::size_t steady = 0, slower = 0;
    for (const history::series& s : set.all) {
        if (!s.regressed()) {
            steady += s.changes.empty();
            continue;
        }
        ++slower;
        const history::found_change& c = s.changes.back();
        const std::string date =
            c.index < s.points.size() ? history::format_utc(s.points[c.index].launch->time_s) : "?";
        cause& k = causes[{date, c.moved, c.with}];
        k.launch = k.series == 0 || k.launch == c.index + 1 ? c.index + 1 : 0;
        k.lo = k.series == 0 ? c.change() : std::min(k.lo, c.change());
        k.hi = k.series == 0 ? c.change() : std::max(k.hi, c.change());
        ++k.series;
    }
    std::string md = fmt::format("\nHistory: {} series, {} without a change point, {} slower "
                                 "since their last change{}\n",
                                 set.all.size(), steady, slower, slower == 0 ? "." : ":");
    std::vector<std::string> lines;
    for (const auto& [key, k] : causes) {
        const auto& [date, moved, with] = key;
        const std::string range = k.lo == k.hi
                                      ? fmt::format("{:+.1f}%", 100 * k.lo)
                                      : fmt::format("{:+.1f}% to {:+.1f}%", 100 * k.lo, 100 * k.hi);
        lines.push_back(fmt::format(
            "[{} series](report.html#history) slower since {}({}), {}: {}{}", k.series,
            k.launch > 0 ? fmt::format("#{} ", k.launch) : "", markdown_text(date), range,
            markdown_text(moved), with.empty() ? "" : "; with it: " + markdown_text(with)));
    }
    return md + (lines.empty() ? "" : "\n" + capped(lines, max, "History"));
}

/// What was marked, as one line with its counts; the Machine and History sections list them.
std::string marked_line(const summary_inputs& in) {
    std::size_t cases = 0, launches = 0;
    std::string first;
    if (in.pooled)
        for (const pooled_case& p : *in.pooled)
            if (const std::string m = marks_text(p, true); !m.empty()) {
                ++cases;
                if (first.empty())
                    first = m;
            }
    if (in.history)
        for (const history::series& s : in.history->all)
            if (s.marked + s.skipped > 0) {
                launches += s.marked + s.skipped;
                if (first.empty())
                    first = s.first_mark;
            }
    if (cases + launches == 0)
        return "\nNothing was marked: no case ran on a contended machine or while the sentinel "
               "drifted.\n";
    return fmt::format("\nMarked (measured on a busy machine or while the sentinel drifted): {} "
                       "case(s), {} history launch(es); the first: {}. The Machine and History "
                       "sections list them.\n",
                       cases, launches, markdown_text(first));
}

} // namespace

std::string summary_section(const summary_inputs& in, std::size_t max_lines) {
    std::string md = "## At a glance\n";
    if (in.crossover)
        md += scheme_lines(*in.crossover, max_lines);
    if (in.scaling)
        md += efficiency_lines(*in.scaling, max_lines);
    if (in.history)
        md += regression_lines(*in.history, max_lines);
    md += marked_line(in);
    return md + "\n";
}

} // namespace ringscale::analysis
