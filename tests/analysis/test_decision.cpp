// The one decision rule (analysis/statistics/decision.hpp): every state of its table
// (analysis/statistics/README.md, "One decision rule"), its verdict, reason and gate exit code,
// exactly.
#include "analysis/statistics/decision.hpp"

#include <gtest/gtest.h>
#include <limits>

using namespace ringscale::analysis;

namespace {

decision_inputs two_sided(double lo, double hi) {
    decision_inputs in;
    in.launches_a = 3;
    in.launches_b = 3;
    in.ratio_lo = lo;
    in.ratio_hi = hi;
    in.threshold = 0.05;
    in.noise = 0.02;
    return in;
}

struct state {
    const char* name;
    decision_inputs in;
    decision verdict;
    const char* reason;
    int exit_code;
};

std::vector<state> table() {
    std::vector<state> s;
    auto add = [&](const char* name, decision_inputs in, decision d, const char* why, int rc) {
        s.push_back({name, std::move(in), d, why, rc});
    };
    auto in = two_sided(1.2, 1.3);
    in.launches_b = 1;
    add("one launch", in, decision::not_decided, "one launch", 6);
    in.launches_b = 0;
    add("no launch", in, decision::not_decided, "no launch", 6);
    add("no interval", two_sided(NAN, NAN), decision::not_decided, "no interval", 6);
    add("slower", two_sided(1.2, 1.3), decision::slower, "beyond threshold", 1);
    add("faster", two_sided(0.7, 0.8), decision::faster, "beyond threshold", 0);
    add("tie", two_sided(0.98, 1.03), decision::tie, "within threshold", 0);
    add("within noise", two_sided(0.891, 1.087), decision::not_decided, "within noise", 6);
    in = two_sided(1.2, 1.3);
    in.mark_b = 2;
    in.mark_reason_b = "oversubscribed: 2 threads on 1 core";
    add("marked slower", in, decision::not_decided,
        "marked: oversubscribed: 2 threads on 1 core (x2.00) could account for the +20% margin", 6);
    in = two_sided(0.7, 0.8);
    in.mark_a = 1.5;
    add("marked faster", in, decision::not_decided,
        "marked: a mark (x1.50) could account for the -20% margin", 6);
    in = two_sided(0.98, 1.03);
    in.mark_a = 1.1;
    in.mark_reason_a = "other processes used 0.30 of the 2 core(s) the ranks may use";
    add("marked tie", in, decision::not_decided,
        "marked: other processes used 0.30 of the 2 core(s) the ranks may use (x1.10) could "
        "account for the +13% margin",
        6);
    in = two_sided(1.2, 1.3);
    in.mark_b = 1.01; // log 1.01 < the noise 0.02: ignored
    add("mark within noise", in, decision::slower, "beyond threshold", 1);
    in = two_sided(1.5, 1.6);
    in.mark_b = 1.2; // above the noise, far below the margin
    add("mark below margin", in, decision::slower, "beyond threshold", 1);
    in = two_sided(1.2, 1.3);
    in.mark_b = std::numeric_limits<double>::infinity();
    add("unbounded mark", in, decision::not_decided,
        "marked: a mark (unbounded) could account for the +20% margin", 6);
    // The marks weighed as the difference between the sides: a machine as busy before as
    // after decides as a quiet one; a mark one side has more of stays not decided.
    in = two_sided(1.2, 1.3);
    in.mark_a = in.mark_b = in.least_mark_a = in.least_mark_b = 2;
    add("equal marks, slower", in, decision::slower, "beyond threshold", 1);
    in = two_sided(0.98, 1.03);
    in.mark_a = in.mark_b = in.least_mark_a = in.least_mark_b = 1.5;
    add("equal marks, tie", in, decision::tie, "within threshold", 0);
    in = two_sided(0.7, 0.8);
    in.mark_a = in.mark_b = in.least_mark_a = in.least_mark_b = 1.5;
    add("equal marks, faster", in, decision::faster, "beyond threshold", 0);
    in = two_sided(1.2, 1.3);
    in.mark_a = in.least_mark_a = 1.1;
    in.mark_b = 2;
    in.least_mark_b = 1.8;
    add("unequal marks", in, decision::not_decided,
        "marked: a mark (x1.82) could account for the +20% margin", 6);
    in = two_sided(1.2, 1.3);
    in.mark_a = in.mark_b = in.least_mark_b = 2; // a launch of a unmarked: least_mark_a 1
    add("a side partly marked", in, decision::not_decided,
        "marked: a mark (x2.00) could account for the +20% margin", 6);
    return s;
}

} // namespace

TEST(decision, every_state_of_the_table) {
    for (const state& s : table()) {
        const decision_result r = decide(s.in);
        EXPECT_EQ(r.verdict, s.verdict) << s.name;
        EXPECT_EQ(r.reason, s.reason) << s.name;
        EXPECT_EQ(gate_exit_code(r), s.exit_code) << s.name;
    }
}

TEST(decision, a_mark_that_cannot_account_for_the_margin_is_noted) {
    auto in = two_sided(1.5, 1.6);
    in.mark_b = 1.2;
    in.mark_reason_b = "the hypervisor stole 9% of the cores' time";
    const decision_result r = decide(in);
    EXPECT_EQ(r.note, "the hypervisor stole 9% of the cores' time (x1.20) cannot account for the "
                      "margin");
    EXPECT_EQ(decide(two_sided(1.5, 1.6)).note, "");
}

TEST(decision, a_mark_within_the_noise_is_named_beside_the_verdict) {
    auto in = two_sided(2.0, 3.0);
    in.noise = 1.0; // log(1.2) is within it: the rule weighs the mark as 1
    in.mark_b = 1.2;
    in.mark_reason_b = "other processes used 1.50 of the 2 core(s)";
    const decision_result r = decide(in);
    EXPECT_EQ(r.verdict, decision::slower);
    EXPECT_EQ(r.note, "other processes used 1.50 of the 2 core(s) (x1.20), within the noise, "
                      "cannot account for the margin");
    in.least_mark_a = 1.2; // the same mark on both sides: nothing to name
    EXPECT_EQ(decide(in).note, "");
}

TEST(decision, noise_unknown_counts_every_mark) {
    auto in = two_sided(1.2, 1.3);
    in.noise = NAN;
    in.mark_b = 1.2;
    EXPECT_EQ(decide(in).verdict, decision::not_decided);
    in.mark_b = 1.1; // 1.2 / 1.1 > 1.05: it cannot account for the margin
    EXPECT_EQ(decide(in).verdict, decision::slower);
}

TEST(decision, texts) {
    EXPECT_STREQ(to_string(decision::faster), "faster");
    EXPECT_STREQ(to_string(decision::slower), "slower");
    EXPECT_STREQ(to_string(decision::tie), "tie");
    EXPECT_STREQ(to_string(decision::not_decided), "not decided");
    EXPECT_EQ(verdict_text(decide(two_sided(1.2, 1.3))), "slower");
    EXPECT_EQ(verdict_text(decide(two_sided(0.891, 1.087))), "not decided (within noise)");
    auto in = two_sided(1.2, 1.3);
    in.threshold = -1; // a negative threshold is none
    EXPECT_EQ(decide(in).verdict, decision::slower);
}
