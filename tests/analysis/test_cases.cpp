#include "analysis/cases/cases.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

fixture_case make(int p, std::int64_t seq, int iterations = 10) {
    fixture_case c;
    c.world_size = p;
    c.iterations = iterations;
    c.int_params = {{"seq_len", seq}, {"heads", 8}};
    return c;
}

} // namespace

TEST(analysis_cases, key_is_identity_only) {
    const std::string dir = ringscale::test_fixture::fixture_dir("cases_key");
    fixture_file a, b;
    a.cases = {make(4, 4096, 10)};
    b.cases = {make(4, 4096, 30)}; // other iteration count: same case
    write_fixture_file(dir + "/a.h5", a);
    write_fixture_file(dir + "/b.h5", b);
    const result_set rs = load_results({dir}, false);
    ASSERT_EQ(rs.cases.size(), 2u);
    EXPECT_EQ(case_key(rs.cases[0]), case_key(rs.cases[1]));
    EXPECT_EQ(
        case_key(rs.cases[0]),
        "ring_attention|zigzag|P=4|nodes=1x4|comm=mpi|device=cpu|dtype=fp32|heads=8|inputs=uniform|"
        "merge=fp32|scaling=strong|seq_len=4096|threads=0"); // the defaults of older files
    const auto pooled = pool_cases(rs.cases);
    ASSERT_EQ(pooled.size(), 1u);
    EXPECT_EQ(pooled[0].launches.size(), 2u);
    EXPECT_EQ(pooled[0].steps().size(), 40u);
    std::filesystem::remove_all(dir);
}

TEST(analysis_cases, launches_with_other_threads_are_kept_apart) {
    // The same case launched with 1 thread per rank and with 2 (default threads follow the
    // cores, so they differ between machines and launchers): two peaks if pooled.
    const std::string dir = ringscale::test_fixture::fixture_dir("cases_threads");
    fixture_file one, two;
    one.cases = {make(2, 4096)};
    two.cases = {make(2, 4096)};
    two.threads_per_rank = 2;
    two.git_commit = "fixture0002";
    write_fixture_file(dir + "/one.h5", one);
    write_fixture_file(dir + "/two.h5", two);
    const result_set rs = load_results({dir}, false);
    const auto apart = pool_cases(rs.cases);
    ASSERT_EQ(apart.size(), 2u);
    EXPECT_TRUE(apart[0].kept_apart && apart[1].kept_apart);
    EXPECT_NE(apart[0].label().find("[threads="), std::string::npos) << apart[0].label();
    EXPECT_NE(apart[0].label(), apart[1].label());
    const auto notes = resource_notes(apart);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("kept apart"), std::string::npos) << notes[0];
    const auto pooled = pool_cases(rs.cases, true); // --pool-resources
    ASSERT_EQ(pooled.size(), 1u);
    EXPECT_EQ(pooled[0].launches.size(), 2u);
    EXPECT_EQ(pooled[0].resources.size(), 2u);
    ASSERT_EQ(resource_notes(pooled).size(), 1u);
    EXPECT_NE(resource_notes(pooled)[0].find("pooled"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(analysis_cases, strong_families_differ_only_in_p) {
    const std::string dir = ringscale::test_fixture::fixture_dir("cases_strong");
    fixture_file f;
    f.cases = {make(1, 4096), make(2, 4096), make(4, 4096), make(2, 8192), make(8, 8192)};
    write_fixture_file(dir + "/a.h5", f);
    const result_set rs = load_results({dir}, false);
    const auto pooled = pool_cases(rs.cases);
    ASSERT_EQ(pooled.size(), 5u);
    EXPECT_EQ(pooled[0].world_size, 1); // sorted by params (seq_len numerically), then P
    EXPECT_EQ(pooled[3].world_size, 2);
    EXPECT_EQ(pooled[3].params[pooled[3].params.size() - 2].second, "8192"); // then threads
    const auto fams = find_families(pooled);
    ASSERT_EQ(fams.size(), 2u);
    EXPECT_EQ(fams[0].members.size(), 3u);
    EXPECT_EQ(fams[1].members.size(), 2u);
    EXPECT_EQ(fams[1].members[1]->world_size, 8);
    EXPECT_TRUE(fams[0].scaled_params.empty());
    std::filesystem::remove_all(dir);
}

TEST(analysis_cases, weak_families_allow_parameters_proportional_to_p) {
    const std::string dir = ringscale::test_fixture::fixture_dir("cases_weak");
    fixture_file f;
    for (int p : {1, 2, 4, 8}) {
        fixture_case c = make(p, 1024 * p); // seq_len grows with P, heads stay
        c.scaling = "weak";
        f.cases.push_back(c);
    }
    fixture_case other = make(4, 1024 * 3); // neither equal nor proportional: own family
    other.scaling = "weak";
    f.cases.push_back(other);
    write_fixture_file(dir + "/w.h5", f);
    const result_set rs = load_results({dir}, false);
    const auto pooled = pool_cases(rs.cases); // families point into it: keep it alive
    const auto fams = find_families(pooled);
    ASSERT_EQ(fams.size(), 2u);
    EXPECT_EQ(fams[0].members.size(), 4u);
    EXPECT_EQ(fams[0].scaled_params, (std::vector<std::string>{"seq_len"}));
    EXPECT_NE(fams[0].label.find("weak; seq_len grow with P"), std::string::npos);
    EXPECT_EQ(fams[1].members.size(), 1u);
    std::filesystem::remove_all(dir);
}

TEST(analysis_cases, numeric_aware_ordering) {
    EXPECT_TRUE(text_less("9", "10"));
    EXPECT_FALSE(text_less("10", "9"));
    EXPECT_TRUE(text_less("a", "b"));
}

TEST(analysis_cases, common_parameters_are_stripped_from_labels) {
    pooled_case a, b;
    a.params = {{"device", "cpu"}, {"seq_len", "4096"}};
    b.params = {{"device", "cpu"}, {"seq_len", "8192"}};
    const param_list common = common_params({&a, &b});
    EXPECT_EQ(common, (param_list{{"device", "cpu"}}));
    EXPECT_EQ(strip_params("job/v device=cpu seq_len=4096", common), "job/v seq_len=4096");
    EXPECT_TRUE(common_params({&a}).empty());
}

TEST(analysis_cases, families_over_p_on_one_node_and_over_nodes_at_fixed_ranks_per_node) {
    const std::string dir = ringscale::test_fixture::fixture_dir("cases_nodes");
    auto on = [](int nodes, int per_node) {
        fixture_case c = make(nodes * per_node, 4096);
        c.int_params.push_back({"nodes", nodes});
        c.int_params.push_back({"ranks_per_node", per_node});
        return c;
    };
    fixture_file f, old;
    f.cases = {on(1, 2), on(2, 2), on(4, 2), on(1, 4), on(4, 1)};
    old.cases = {make(1, 4096)}; // written before the topology: one node of 1 rank
    write_fixture_file(dir + "/a.h5", f);
    write_fixture_file(dir + "/old.h5", old);
    const result_set rs = load_results({dir}, false);
    const auto pooled = pool_cases(rs.cases);
    ASSERT_EQ(pooled.size(), 6u); // 4 ranks on 1 node and on 4 nodes stay apart
    const auto fams = find_families(pooled);
    ASSERT_EQ(fams.size(), 3u);
    std::vector<std::string> got;
    for (const auto& fam : fams) {
        std::string members;
        for (const pooled_case* c : fam.members)
            members += std::to_string(c->nodes) + "x" + std::to_string(c->ranks_per_node) + " ";
        got.push_back(members);
    }
    // Over P on one node (the old file's P=1 with them); over nodes at 2 ranks per node from
    // the one-node case of 2 ranks, and at 1 rank per node from the one of 1 rank.
    EXPECT_EQ(got, (std::vector<std::string>{"1x1 1x2 1x4 ", "1x2 2x2 4x2 ", "1x1 4x1 "}));
    EXPECT_NE(fams[1].label.find("over nodes, 2 ranks per node"), std::string::npos)
        << fams[1].label;
    std::filesystem::remove_all(dir);
}
