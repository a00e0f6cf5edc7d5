// The closing comparison of attention schemes (src/launcher/scheme_table.hpp): grouped and
// ranked by the analysis' scheme_cells, laid out one row per scheme, fastest first.
#include "src/launcher/scheme_table.hpp"
#include "tests/launcher/attention_case.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::testing_support;
using results::case_record;

namespace {

/// A finished case of `job` at P=2, S=1K: one warm-up row, then steps of `t` seconds on the
/// slowest rank, a quarter of them blocked on communication.
case_record attention_case(const std::string& job, const std::string& variant, double t,
                           const std::string& status = "ok") {
    case_record r = attention_case_p2(job, variant);
    r.outcome = {{"status", status}};
    r.rows = 4;
    r.is_warmup = {1, 0, 0, 0};
    r.time_s = {9, 9, t, t / 2, t, t / 2, t, t / 2};
    r.comm_wait_s = {0, 0, t / 4, 0, t / 4, 0, t / 4, 0};
    r.peak_host_bytes = {3u << 20, 1u << 20};
    r.peak_device_bytes = {0, 0};
    return r;
}

/// `r` repeated `n` times (--repeat n: one record per repetition), the k-th `step` times
/// slower than the first (launch-to-launch noise).
std::vector<case_record> repeated(const case_record& r, int n, double step = 0.01) {
    std::vector<case_record> out;
    for (int k = 0; k < n; ++k) {
        out.push_back(r);
        for (double& t : out.back().time_s)
            t *= 1 + step * k;
    }
    return out;
}

std::vector<case_record> both(std::vector<case_record> a, const std::vector<case_record>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace

TEST(scheme_table, groups_schemes_and_marks_the_fastest) {
    const case_record ring = attention_case("ring_attention", "ring/zigzag", 0.5);
    const case_record ag = attention_case("context_parallel", "allgather", 0.25);
    EXPECT_TRUE(compares_schemes(ring));
    EXPECT_EQ(scheme_table({ring}), ""); // no context_parallel case
    // Three repetitions each (--repeat 3): the one decision rule orders them.
    const std::string table = scheme_table(both(repeated(ring, 3), repeated(ag, 3)));
    ASSERT_NE(table.find("ring/zigzag"), std::string::npos) << table;
    EXPECT_LT(table.find("allgather"), table.find("ring/zigzag")) << table; // fastest first
    const auto ag_row = table.substr(table.find("allgather"));
    EXPECT_NE(ag_row.find("<- fastest"), std::string::npos) << table;
    EXPECT_NE(ag_row.find("2.00"), std::string::npos) << table; // 1e9 / 0.25 s / 2 ranks
    // comm share as summary computes it: (t/4) / (t + t/2) of all ranks' time = 17%
    EXPECT_NE(ag_row.find("   17 "), std::string::npos) << table;
    EXPECT_NE(ag_row.find("3.00 MiB"), std::string::npos) << table; // the largest rank's peak
    EXPECT_EQ(table.find("fastest"), table.rfind("fastest"));
    EXPECT_NE(table.find("     1K     2     fwd    yes     8/8   64   1"), std::string::npos)
        << table;
}

TEST(scheme_table, one_repetition_decides_nothing) {
    // One launch per scheme is "not decided (one launch)", as crossover says.
    const std::string table = scheme_table({attention_case("ring_attention", "ring/zigzag", 0.5),
                                            attention_case("context_parallel", "allgather", 0.25)});
    EXPECT_EQ(table.find("<- fastest"), std::string::npos) << table;
    EXPECT_NE(table.find("not decided (one launch): +100.00%"), std::string::npos) << table;
}

TEST(scheme_table, a_mark_that_could_account_for_the_margin_decides_nothing) {
    // The slower scheme ran two threads on one core: up to x2 on compute, and with no
    // compute_s recorded, on all of its time: it could account for its 2x margin (the same
    // margin unmarked is decided: groups_schemes_and_marks_the_fastest).
    auto ring = repeated(attention_case("ring_attention", "ring/zigzag", 0.5), 3);
    for (case_record& r : ring) {
        r.machine = {{"load_cores", {1, 1}}, {"own_threads", {2, 2}}};
        r.outcome["contended"] = std::int64_t{1};
        r.outcome["contention"] = std::string("oversubscribed: 2 threads on 1 core");
    }
    const auto ag = repeated(attention_case("context_parallel", "allgather", 0.25), 3);
    const std::string table = scheme_table(both(ring, ag));
    EXPECT_EQ(table.find("<- fastest"), std::string::npos) << table;
    EXPECT_NE(table.find("not decided (marked: oversubscribed: 2 threads on 1 core"),
              std::string::npos)
        << table;
}

TEST(scheme_table, identity_fields_that_vary_get_a_column) {
    // --dtype fp32,bf16: two groups that the fixed columns cannot tell apart.
    std::vector<case_record> all;
    for (const char* dtype : {"fp32", "bf16"})
        for (case_record r : {attention_case("ring_attention", "ring/zigzag", 0.5),
                              attention_case("context_parallel", "allgather", 0.25)}) {
            r.identity["dtype"] = std::string(dtype);
            all.push_back(r);
        }
    const std::string table = scheme_table(all);
    EXPECT_NE(table.find("    dtype"), std::string::npos) << table;
    EXPECT_NE(table.find("     bf16"), std::string::npos) << table;
    EXPECT_NE(table.find("     fp32"), std::string::npos) << table;
    // A field that is the same on every row stays out.
    EXPECT_EQ(scheme_table({all[0], all[1]}).find("dtype"), std::string::npos);
}

TEST(scheme_table, failed_cases_drop_out_and_a_scheme_alone_is_not_marked) {
    const std::string failed =
        scheme_table({attention_case("ring_attention", "ring/zigzag", 0.5, "failed"),
                      attention_case("context_parallel", "allgather", 0.25)});
    EXPECT_EQ(failed.find("ring/zigzag"), std::string::npos) << failed;
    EXPECT_NE(failed.find("allgather"), std::string::npos) << failed;
    EXPECT_EQ(failed.find("fastest"), std::string::npos) << failed; // a group of one
}

TEST(scheme_table, one_rank_is_same_work_and_not_ranked) {
    auto at_one_rank = [](case_record r) {
        r.identity["world_size"] = std::int64_t{1};
        r.world = 1;
        r.time_s = {9, r.time_s[2], r.time_s[4], r.time_s[6]};
        r.comm_wait_s = {0, 0, 0, 0};
        r.peak_host_bytes = {1u << 20};
        r.peak_device_bytes = {0};
        return r;
    };
    const std::string table =
        scheme_table({at_one_rank(attention_case("ring_attention", "ring/zigzag", 0.5)),
                      at_one_rank(attention_case("context_parallel", "allgather", 0.25))});
    EXPECT_EQ(table.find("fastest"), std::string::npos) << table;
    EXPECT_NE(table.find("same work, not ranked"), std::string::npos) << table;
}

TEST(scheme_table, labels_say_how_the_scheme_ran) {
    case_record hybrid = attention_case("context_parallel", "hybrid", 0.25);
    hybrid.derived["variant_label"] = std::string("hybrid/u2"); // the degree P gave it
    case_record ring = attention_case("ring_attention", "ring/zigzag", 0.5);
    ring.identity["overlap"] = std::string("off");
    const std::string table = scheme_table({hybrid, ring});
    EXPECT_NE(table.find("hybrid/u2"), std::string::npos) << table;
    EXPECT_NE(table.find("ring/zigzag/no-ovl"), std::string::npos) << table;
}

TEST(scheme_table, a_margin_within_the_noise_is_a_tie) {
    // Eight noisy steps each; the medians 0.03% apart: no fastest, the margin said.
    auto noisy = [](case_record r, double scale) {
        r.rows = 9;
        r.is_warmup = {1, 0, 0, 0, 0, 0, 0, 0, 0};
        r.time_s.clear();
        r.comm_wait_s.clear();
        for (double t : {9.0, 1.00, 1.05, 0.95, 1.02, 0.98, 1.04, 0.96, 1.01})
            for (int k = 0; k < 2; ++k) {
                r.time_s.push_back(t * scale);
                r.comm_wait_s.push_back(0);
            }
        return r;
    };
    // Three repetitions each: the ratio's CI straddles the 1% band, so nothing is decided.
    const std::string tie = scheme_table(
        both(repeated(noisy(attention_case("ring_attention", "ring/zigzag", 1), 1.0003), 3),
             repeated(noisy(attention_case("context_parallel", "allgather", 1), 1.0), 3)));
    EXPECT_EQ(tie.find("<- fastest"), std::string::npos) << tie;
    EXPECT_NE(tie.find("not decided (within noise): +0.03%"), std::string::npos) << tie;
    // The same noise, 30% apart: beyond it.
    const std::string apart = scheme_table(
        both(repeated(noisy(attention_case("ring_attention", "ring/zigzag", 1), 1.3), 3),
             repeated(noisy(attention_case("context_parallel", "allgather", 1), 1.0), 3)));
    EXPECT_NE(apart.find("<- fastest"), std::string::npos) << apart;
}

TEST(scheme_table, the_mask_is_shown) {
    case_record ring = attention_case("ring_attention", "ring/zigzag", 0.5);
    case_record ag = attention_case("context_parallel", "allgather", 0.25);
    for (case_record* r : {&ring, &ag})
        r->identity["window"] = std::int64_t{256};
    const std::string table = scheme_table({ring, ag});
    EXPECT_NE(table.find("mask"), std::string::npos) << table;
    EXPECT_NE(table.find("window=256"), std::string::npos) << table;
    EXPECT_NE(scheme_table({attention_case("ring_attention", "ring/zigzag", 0.5),
                            attention_case("context_parallel", "allgather", 0.25)})
                  .find("      - "),
              std::string::npos); // no mask: a dash
}
