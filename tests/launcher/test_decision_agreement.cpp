// One decision rule, every consumer. For each state of the rule's table (DESIGN.md,
// "One decision rule"), built as real measurements of two attention schemes, the launcher's
// closing table, `crossover` (whose cells and crossings the report's plots draw), and
// `compare` with its exit code all give the verdict decide() gives. (history's agreement is
// tested with history.)
#include "src/launcher/scheme_table.hpp"

#include "analysis/cases/case_decision.hpp"
#include "analysis/cases/record_cases.hpp"
#include "analysis/comparisons/compare.hpp"
#include "analysis/comparisons/crossover.hpp"
#include "tests/launcher/attention_case.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::testing_support;
using analysis::decision;
using results::case_record;

namespace {

/// One launch (repetition) of a scheme at P=2, S=1K: steps of `t` s on the slowest rank.
case_record scheme_launch(const std::string& job, const std::string& variant, double t) {
    case_record r = attention_case_p2(job, variant);
    r.outcome = {{"status", std::string("ok")}};
    r.rows = 7;
    r.is_warmup = {1, 0, 0, 0, 0, 0, 0};
    for (double f : {9.0, 1.0, 1.001, 0.999, 1.0, 1.0005, 0.9995})
        for (int k = 0; k < 2; ++k)
            r.time_s.push_back(f * t);
    r.peak_host_bytes = {1u << 20, 1u << 20};
    r.peak_device_bytes = {0, 0};
    return r;
}

/// A state: side a (allgather, faster) and side b (ring) as launches of median times, and
/// whether b ran two threads on one core (oversubscribed: x2 on its whole time on the CPU).
struct state {
    const char* name;
    std::vector<double> a, b;
    bool b_marked;
    decision expected;
    bool a_marked = false; ///< a as b: the same mark on both sides
};

std::vector<case_record> launches(const std::string& job, const std::string& variant,
                                  const std::vector<double>& times, bool marked) {
    std::vector<case_record> out;
    for (double t : times) {
        out.push_back(scheme_launch(job, variant, t));
        if (marked)
            out.back().machine = {{"load_cores", {1, 1}}, {"own_threads", {2, 2}}};
    }
    return out;
}

std::vector<analysis::case_data> as_cases(const std::vector<case_record>& recs) {
    auto file = std::make_shared<analysis::file_info>();
    file->path = "state";
    std::vector<analysis::case_data> out;
    for (std::size_t i = 0; i < recs.size(); ++i)
        out.push_back(analysis::case_from_record(recs[i], file, std::to_string(i)));
    return out;
}

decision launcher_verdict(const std::string& table) {
    if (table.find("<- fastest") != std::string::npos)
        return decision::slower;
    if (table.find("  tie: ") != std::string::npos)
        return decision::tie;
    EXPECT_NE(table.find("  not decided ("), std::string::npos) << table;
    return decision::not_decided;
}

decision crossover_verdict(const std::string& v) {
    if (v == "confirmed")
        return decision::slower;
    if (v == "tie")
        return decision::tie;
    EXPECT_EQ(v.rfind("not decided (", 0), 0u) << v;
    return decision::not_decided;
}

decision compare_verdict(analysis::verdict v) {
    switch (v) {
    case analysis::verdict::regression:
        return decision::slower;
    case analysis::verdict::improvement:
        return decision::faster;
    case analysis::verdict::unchanged:
        return decision::tie;
    default:
        return decision::not_decided;
    }
}

} // namespace

TEST(decision_agreement, every_consumer_gives_the_rule_s_verdict) {
    const std::vector<state> states = {
        {"slower", {0.25, 0.251, 0.249}, {0.5, 0.502, 0.498}, false, decision::slower},
        {"one launch", {0.25}, {0.5}, false, decision::not_decided},
        {"tie", {0.25, 0.25, 0.25}, {0.25, 0.25, 0.25}, false, decision::tie},
        {"within noise", {0.25, 0.28, 0.22}, {0.26, 0.23, 0.29}, false, decision::not_decided},
        {"marked", {0.25, 0.251, 0.249}, {0.45, 0.451, 0.449}, true, decision::not_decided},
        {"mark below the margin",
         {0.25, 0.251, 0.249},
         {1.0, 1.002, 0.998},
         true,
         decision::slower},
        // The same mark on both sides cannot account for the change between them.
        {"marked on both sides",
         {0.25, 0.251, 0.249},
         {0.45, 0.451, 0.449},
         true,
         decision::slower,
         true},
        {"tie, marked on both sides",
         {0.25, 0.251, 0.249},
         {0.25, 0.251, 0.249},
         true,
         decision::tie,
         true},
    };
    for (const state& s : states) {
        SCOPED_TRACE(s.name);
        const auto a = launches("context_parallel", "allgather", s.a, s.a_marked);
        const auto b = launches("ring_attention", "ring/zigzag", s.b, s.b_marked);
        std::vector<case_record> all = a;
        all.insert(all.end(), b.begin(), b.end());
        // The rule itself, on the pooled sides.
        const auto cases = as_cases(all);
        const auto pooled = analysis::pool_cases(cases);
        ASSERT_EQ(pooled.size(), 2u);
        const analysis::pooled_case& pa =
            pooled[0].job == "context_parallel" ? pooled[0] : pooled[1];
        const analysis::pooled_case& pb = &pa == &pooled[0] ? pooled[1] : pooled[0];
        const analysis::interval ci = analysis::ratio_ci(pa, pb, 2000, 1, 0.95);
        const analysis::decision_result rule = analysis::decide_cases(pa, pb, ci, 0.01);
        EXPECT_EQ(rule.verdict, s.expected) << rule.reason;
        // The launcher's closing table.
        EXPECT_EQ(launcher_verdict(scheme_table(all)), rule.verdict);
        // crossover's cell (the report draws its cells and crossings).
        const analysis::crossover_result cr = analysis::find_crossovers(pooled, {});
        ASSERT_EQ(cr.cells.size(), 1u);
        EXPECT_EQ(crossover_verdict(cr.cells[0].verdict), rule.verdict) << cr.cells[0].verdict;
        // compare BASE = a, NEW = b's timings and marks under a's identity, threshold 1%.
        const auto b_as_a = launches("context_parallel", "allgather", s.b, s.b_marked);
        const auto base_cases = as_cases(a), new_cases = as_cases(b_as_a);
        analysis::compare_options opt;
        opt.threshold = 0.01;
        const analysis::comparison cmp = analysis::compare_sets(
            analysis::pool_cases(base_cases, true), analysis::pool_cases(new_cases, true), opt);
        ASSERT_EQ(cmp.matched.size(), 1u);
        EXPECT_EQ(compare_verdict(cmp.matched[0].result), rule.verdict) << cmp.matched[0].reason;
        EXPECT_EQ(analysis::compare_exit_code(cmp, true), analysis::gate_exit_code(rule));
    }
}
