// The report's first screen (analysis/presentation/report_summary.hpp): each answer with only
// the fields that vary, the common fields once, "fastest" only where the decision rule
// confirmed it, the regressed series one line per cause, the marked launches one line.
#include "analysis/presentation/report_summary.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ringscale::analysis {
namespace {

constexpr auto npos = std::string::npos;

crossover_cell cell(double s, int p, const std::string& shape, const std::string& first,
                    const std::string& second, double margin, const std::string& verdict) {
    crossover_cell c;
    c.shape = shape;
    c.seq_len = s;
    c.world_size = p;
    c.schemes.resize(2);
    c.schemes[0].scheme = first;
    c.schemes[1].scheme = second;
    c.margin = margin;
    c.margin_lo = margin - 0.5;
    c.margin_hi = margin + 0.5;
    c.verdict = verdict;
    return c;
}

/// The list item of `md` that starts with `start`, or "".
std::string line_of(const std::string& md, const std::string& start) {
    const std::size_t at = md.find("\n- " + start);
    return at == npos ? "" : md.substr(at + 3, md.find('\n', at + 3) - at - 3);
}

TEST(report_summary, answers_show_the_varying_fields_and_the_common_ones_once) {
    crossover_result r;
    r.cells.push_back(cell(1024, 2, "batch=1 causal=1 device=cpu heads=4", "ring/zigzag",
                           "ring/contiguous", 0.227, "not decided (within noise)"));
    r.cells.push_back(cell(4096, 4, "batch=1 causal=1 device=cpu heads=8", "hybrid", "ring/zigzag",
                           0.56, "confirmed"));
    const std::string md = summary_section({&r, nullptr, nullptr, nullptr});

    EXPECT_NE(md.find("every line has batch=1 causal=1 device=cpu:"), npos) << md;
    const std::string undecided = line_of(md, "S=1K, P=2");
    EXPECT_EQ(undecided, "S=1K, P=2 (heads=4): ring/zigzag +22.7% [-27.3%, +72.7%] over "
                         "ring/contiguous: not decided (within noise)");
    EXPECT_EQ(line_of(md, "S=4K, P=4"),
              "S=4K, P=4 (heads=8): **hybrid** fastest, +56.0% [+6.0%, +106.0%] over "
              "ring/zigzag: confirmed");
    // The common fields are said once, never in an answer.
    EXPECT_EQ(md.find("causal=1"), md.rfind("causal=1"));
}

TEST(report_summary, fastest_only_where_the_rule_confirmed_it) {
    crossover_result r;
    for (const char* v : {"tie", "not decided (one launch)", "not decided (marked: busy)"})
        r.cells.push_back(cell(2048, 2, "heads=4", "ulysses", "allgather", 0.3, v));
    r.cells.push_back(cell(2048, 1, "heads=4", "ulysses", "allgather", 0.3, "same work (P=1)"));
    r.cells.back().same_work = true;
    const std::string md = summary_section({&r, nullptr, nullptr, nullptr});
    EXPECT_EQ(md.find("fastest"), npos) << md;
    EXPECT_EQ(md.find("P=1:"), npos) << "a same-work cell is never ranked: " << md;
    EXPECT_NE(md.find("ulysses +30.0% [-20.0%, +80.0%] over allgather: tie"), npos) << md;
}

history::series regressed(const history::launch_record& at, std::size_t index, double before,
                          double after, const std::string& moved, const std::string& with) {
    history::series s;
    s.label = "collectives/allreduce P=2";
    s.env = "cpu | Open MPI | Open MPI v4.1.4, package: Debian OpenMPI";
    s.points.resize(index + 2);
    for (auto& p : s.points)
        p.launch = &at;
    history::found_change c;
    c.index = index;
    c.before.value = before;
    c.after.value = after;
    c.moved = moved;
    c.with = with;
    c.verdict.verdict = decision::slower;
    s.changes.push_back(c);
    return s;
}

TEST(report_summary, history_is_one_line_per_cause_and_marks_one_line) {
    history::launch_record at;
    at.time_s = 1796616780; // 2026-12-07 04:13 UTC
    history::series_set set;
    set.all.push_back(regressed(at, 7, 1.0, 1.2, "communication", "MPI transport -> tcp"));
    set.all.push_back(regressed(at, 7, 1.0, 1.5, "communication", "MPI transport -> tcp"));
    set.all.push_back(regressed(at, 3, 1.0, 2.0, "compute", ""));
    set.all.emplace_back(); // steady, no change point
    set.all.back().marked = 3;
    set.all.back().first_mark = "contended: other processes used 1.5 cores";
    const std::string md = summary_section({nullptr, nullptr, &set, nullptr});

    EXPECT_NE(md.find("History: 4 series, 1 without a change point, 3 slower"), npos) << md;
    EXPECT_NE(md.find("- [2 series](report.html#history) slower since #8 (2026-12-07 04:13), "
                      "+20.0% to +50.0%: communication; with it: MPI transport -\\> tcp\n"),
              npos)
        << md;
    EXPECT_NE(md.find("- [1 series](report.html#history) slower since #4 (2026-12-07 04:13), "
                      "+100.0%: compute\n"),
              npos)
        << md;
    EXPECT_EQ(md.find("Open MPI v4.1.4"), npos) << "no environment string per series: " << md;
    EXPECT_NE(md.find("\nMarked (measured on a busy machine or while the sentinel drifted): 0 "
                      "case(s), 3 history launch(es); the first: contended: other processes "
                      "used 1.5 cores."),
              npos)
        << md;
}

TEST(report_summary, nothing_marked_says_so) {
    history::series_set set;
    set.all.emplace_back();
    const std::string md = summary_section({nullptr, nullptr, &set, nullptr});
    EXPECT_NE(md.find("Nothing was marked"), npos) << md;
    EXPECT_NE(md.find("0 slower since their last change."), npos) << md;
}

} // namespace
} // namespace ringscale::analysis
