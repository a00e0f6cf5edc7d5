#include "src/launcher/scheme_table.hpp"

#include "analysis/cases/case_decision.hpp"
#include "analysis/cases/cases.hpp"
#include "analysis/cases/record_cases.hpp"
#include "analysis/cases/scheme_cells.hpp"
#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <utility>

namespace ringscale {

namespace {

namespace attr = schema::attr;
using analysis::case_data;

/// ringscale-stats crossover's least noise floor: the threshold of the closing table's rule.
constexpr double tie_floor = 0.01;

bool is_on(const std::string& text) {
    return text == "1" || text == "on" || text == "true" || text == "yes";
}

/// The scheme as this launch ran it: hybrid with the degree P gave it, ring without overlap.
std::string scheme_label(const case_data& c) {
    std::string s = c.text(attr::variant_label, c.variant);
    if (c.job == "ring_attention" && !c.text("overlap").empty() && !is_on(c.text("overlap")))
        s += "/no-ovl";
    return s;
}

/// The problem the schemes of a cell share, as the row's first columns.
std::string problem_text(const analysis::crossover_cell& cell, const case_data& c) {
    return fmt::format("{:>8} {:>5} {:>7} {:>6} {:>7} {:>4} {:>3}",
                       format_size(static_cast<std::uint64_t>(cell.seq_len)), cell.world_size,
                       c.text("pass"), is_on(c.text("causal")) ? "yes" : "no",
                       fmt::format("{}/{}", c.text("heads"), c.text(attr::kv_heads)),
                       c.text("head_dim"), c.text("batch"));
}

/// Share of time blocked on communication, as ringscale-stats summary computes it: sum of
/// comm_wait_s over sum of time_s, every rank and timed row of every launch.
double comm_share(const analysis::pooled_case& p) {
    double wait = 0, total = 0;
    for (const case_data* c : p.launches)
        if (c->comm_wait_s.size() == c->rows * c->world)
            for (const std::size_t r : c->measured_rows())
                for (std::size_t k = 0; k < c->world; ++k) {
                    wait += c->comm_wait_s[r * c->world + k];
                    total += c->time_s[r * c->world + k];
                }
    return total > 0 ? wait / total : 0;
}

/// The attention mask of a case in one token ("window=512", "docs=4x256+sparsity=0.5"), or "-".
std::string mask_text(const case_data& c) {
    std::string out;
    for (const char* name : {attr::window, attr::docs, attr::sparsity, attr::sparse_pattern,
                             attr::sparse_block, attr::dilation})
        if (const std::string v = c.text(name); !v.empty())
            out += (out.empty() ? "" : "+") + std::string(name) + "=" + v;
    return out.empty() ? "-" : out;
}

/// The first row's mark, by the one decision rule (analysis/statistics/decision.hpp) with
/// ringscale-stats crossover's least noise floor (1%) as its threshold: "<- fastest" only
/// when the runner-up is slower beyond it over this launch's repetitions (--repeat) and no
/// mark could account for the margin; else the verdict, with the margin.
std::string fastest_mark(const analysis::crossover_cell& cell) {
    const analysis::scheme_point &fast = cell.schemes[0], &next = cell.schemes[1];
    const double margin = next.median_s / fast.median_s - 1;
    const analysis::interval ci = analysis::ratio_ci(*fast.source, *next.source, 2000, 1, 0.95);
    const analysis::decision_result d =
        analysis::decide_cases(*fast.source, *next.source, ci, tie_floor);
    if (d.verdict == analysis::decision::slower)
        return "  <- fastest";
    return fmt::format("  {}: {:+.2f}%", analysis::verdict_text(d), 100 * margin);
}

/// Identity fields the fixed columns do not show.
bool shown(const std::string& key) {
    static const char* const fixed[] = {attr::job,
                                        attr::variant,
                                        attr::world_size,
                                        "seq_len",
                                        "pass",
                                        "causal",
                                        "heads",
                                        attr::kv_heads,
                                        "head_dim",
                                        "batch",
                                        "layout",
                                        attr::window,
                                        attr::docs,
                                        attr::sparsity,
                                        attr::sparse_pattern,
                                        attr::sparse_block,
                                        attr::dilation,
                                        attr::overlap,
                                        attr::ulysses_degree};
    for (const char* f : fixed)
        if (key == f)
            return true;
    return false;
}

/// The identity fields not among the fixed columns whose value differs between two rows
/// (dtype, merge, inputs, ...): a column each, so rows that differ only there can be told
/// apart.
std::vector<std::string> varying_fields(const std::vector<analysis::crossover_cell>& cells) {
    std::map<std::string, std::set<std::string>> values;
    for (const analysis::crossover_cell& cell : cells)
        for (const analysis::scheme_point& s : cell.schemes) {
            for (const auto& [k, v] : s.source->launches.front()->identity)
                if (!shown(k))
                    values[k].insert(v.text);
        }
    std::vector<std::string> out;
    for (const auto& [k, v] : values)
        if (v.size() > 1)
            out.push_back(k);
    return out;
}

std::string row_text(const std::string& problem, const analysis::scheme_point& s,
                     const std::vector<std::string>& extra, const std::string& mark) {
    const case_data& c = *s.source->launches.front();
    const double t = s.median_s;
    const double gf = c.number(attr::flops_per_iter).value_or(0) / t / c.world_size / 1e9;
    std::string more;
    for (const std::string& k : extra)
        more += fmt::format(" {:>8}", c.text(k, "-"));
    return fmt::format("{} {:>12} {:>10} {:>12}{} {:>9} {:>9.2f} {:>5.0f} {:>10} {:>10}{}\n",
                       problem, scheme_label(c), c.text("layout"), mask_text(c), more,
                       format_seconds(t), gf, 100.0 * comm_share(*s.source),
                       format_bytes(c.number(attr::comm_bytes_per_iter).value_or(0)),
                       format_bytes(s.peak_bytes), mark);
}

} // namespace

bool compares_schemes(const results::case_record& rec) {
    const std::string job = rec.text(attr::job);
    return job == "ring_attention" || job == "context_parallel";
}

std::string scheme_table(const std::vector<results::case_record>& records) {
    auto launch = std::make_shared<analysis::file_info>();
    launch->path = "this launch";
    std::vector<case_data> cases;
    for (std::size_t i = 0; i < records.size(); ++i)
        if (compares_schemes(records[i]))
            cases.push_back(analysis::case_from_record(records[i], launch, std::to_string(i)));
    const std::vector<analysis::pooled_case> pooled = analysis::pool_cases(cases);
    const bool any_cp = std::any_of(pooled.begin(), pooled.end(), [](const auto& p) {
        return p.job == "context_parallel" && !p.launches.empty();
    });
    if (!any_cp)
        return {};
    const std::vector<analysis::crossover_cell> cells = analysis::scheme_cells(pooled);
    const std::vector<std::string> extra = varying_fields(cells);
    std::string out =
        "#\n# comparison of context-parallel schemes, quickest first as ringscale-stats crossover "
        "ranks them (time: median of the slowest rank;\n# comm%: share of all ranks' time blocked "
        "on communication; sent: bytes sent per rank per iteration; peak: memory of the largest "
        "rank;\n# the first row is marked as the quickest only when the one decision rule orders "
        "it "
        "(DESIGN.md, 'One decision rule': 2 or more repetitions each, --repeat N; beyond 1%; no "
        "mark that could account for the margin), else it shows the rule's verdict)\n";
    std::string extra_head;
    for (const std::string& k : extra)
        extra_head += fmt::format(" {:>8}", k);
    out += fmt::format("#{:>7} {:>5} {:>7} {:>6} {:>7} {:>4} {:>3} {:>12} {:>10} {:>12}{} {:>9} "
                       "{:>9} {:>5} {:>10} {:>10}\n",
                       "seq", "ranks", "pass", "causal", "H/Hkv", "D", "B", "scheme", "layout",
                       "mask", extra_head, "time", "GF/s/rank", "comm%", "sent/rank", "peak/rank");
    for (const analysis::crossover_cell& cell : cells) {
        const std::string problem = problem_text(cell, *cell.schemes.front().source->launches[0]);
        // One rank: every scheme does the same work, so none is ranked.
        for (std::size_t i = 0; i < cell.schemes.size(); ++i)
            out += row_text(problem, cell.schemes[i], extra,
                            cell.schemes.size() < 2 ? ""
                            : cell.same_work ? (i == 0 ? "  (P=1: same work, not ranked)" : "")
                            : i == 0         ? fastest_mark(cell)
                                             : "");
    }
    return out;
}

} // namespace ringscale
