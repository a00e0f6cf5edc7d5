#include "src/launcher/scheme_table.hpp"

#include "analysis/cases/cases.hpp"
#include "analysis/cases/record_cases.hpp"
#include "analysis/cases/scheme_cells.hpp"
#include "analysis/statistics/bootstrap.hpp"
#include "analysis/statistics/descriptive.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <utility>

namespace ringscale {

namespace {

namespace attr = schema::attr;
using analysis::case_data;

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

/// Where a scheme's median step time may lie, from its own iterations: the 95% CI of the
/// median, or with too few iterations for one (n < 6) their whole range.
std::pair<double, double> noise_of(const analysis::scheme_point& s) {
    std::vector<double> steps = s.source->steps();
    std::sort(steps.begin(), steps.end());
    if (steps.empty())
        return {s.median_s, s.median_s};
    const analysis::estimate e = analysis::median_ci_sorted(steps);
    if (std::isfinite(e.lo) && std::isfinite(e.hi))
        return {e.lo, e.hi};
    return {steps.front(), steps.back()};
}

/// The first row's mark: "<- fastest" only when it beats the runner-up beyond the noise of
/// both (their medians' intervals apart, and by more than 1%, ringscale-stats crossover's
/// least tie floor); else a tie, with the margin.
std::string fastest_mark(const analysis::crossover_cell& cell) {
    const analysis::scheme_point &fast = cell.schemes[0], &next = cell.schemes[1];
    const double margin = next.median_s / fast.median_s - 1;
    if (noise_of(fast).second < noise_of(next).first && margin > 0.01)
        return "  <- fastest";
    return fmt::format("  tie: {:+.2g}% is within the noise", 100 * margin);
}

std::string row_text(const std::string& problem, const analysis::scheme_point& s,
                     const std::string& mark) {
    const case_data& c = *s.source->launches.front();
    const double t = s.median_s;
    const double gf = c.number(attr::flops_per_iter).value_or(0) / t / c.world_size / 1e9;
    return fmt::format("{} {:>12} {:>10} {:>12} {:>9} {:>9.2f} {:>5.0f} {:>10} {:>10}{}\n", problem,
                       scheme_label(c), c.text("layout"), mask_text(c), format_seconds(t), gf,
                       100.0 * comm_share(*s.source),
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
    std::string out =
        "#\n# comparison of context-parallel schemes, quickest first as ringscale-stats crossover "
        "ranks them (time: median of the slowest rank;\n# comm%: share of all ranks' time blocked "
        "on communication; sent: bytes sent per rank per iteration; peak: memory of the largest "
        "rank;\n# the first row is marked only when it leads beyond the 95% CIs of both medians "
        "and by more than 1%, else a tie)\n";
    out += fmt::format("#{:>7} {:>5} {:>7} {:>6} {:>7} {:>4} {:>3} {:>12} {:>10} {:>12} {:>9} "
                       "{:>9} {:>5} {:>10} {:>10}\n",
                       "seq", "ranks", "pass", "causal", "H/Hkv", "D", "B", "scheme", "layout",
                       "mask", "time", "GF/s/rank", "comm%", "sent/rank", "peak/rank");
    for (const analysis::crossover_cell& cell : analysis::scheme_cells(pooled)) {
        const std::string problem = problem_text(cell, *cell.schemes.front().source->launches[0]);
        // One rank: every scheme does the same work, so none is ranked.
        for (std::size_t i = 0; i < cell.schemes.size(); ++i)
            out += row_text(problem, cell.schemes[i],
                            cell.schemes.size() < 2 ? ""
                            : cell.same_work ? (i == 0 ? "  (P=1: same work, not ranked)" : "")
                            : i == 0         ? fastest_mark(cell)
                                             : "");
    }
    return out;
}

} // namespace ringscale
