// Memory and CPU resources of cases (analysis/measures/resources.hpp): peak memory over ranks and
// launches, memory regressions in compare, and the note on a superlinear efficiency.
#include "analysis/cases/cases.hpp"
#include "analysis/measures/resources.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

constexpr double mib = 1024.0 * 1024.0;

struct loaded {
    std::string dir;
    result_set rs;
    std::vector<pooled_case> pooled;
    loaded(const char* tag, const std::vector<fixture_file>& files)
        : dir(ringscale::test_fixture::fixture_dir(tag)) {
        for (std::size_t i = 0; i < files.size(); ++i)
            write_fixture_file(dir + "/" + std::to_string(i) + ".h5", files[i]);
        rs = load_results({dir}, true);
        pooled = pool_cases(rs.cases);
    }
    ~loaded() { std::filesystem::remove_all(dir); }
};

fixture_file one_case(std::uint64_t host_bytes, int threads, int cores, int p = 2) {
    fixture_file f;
    f.threads_per_rank = threads;
    fixture_case c;
    c.world_size = p;
    c.peak_host_bytes = host_bytes;
    c.rank_memory_skew = {1.0, 0.5};
    c.affinity_cores = cores;
    f.cases = {c};
    return f;
}

} // namespace

TEST(analysis_resources, peak_memory_is_the_max_over_ranks_and_launches) {
    loaded l("res_peak", {one_case(8 << 20, 1, 1), one_case(10 << 20, 1, 1)});
    ASSERT_EQ(l.pooled.size(), 1u);
    EXPECT_EQ(peak_memory(l.pooled[0], "peak_host_bytes"), 10.0 * mib);
    EXPECT_EQ(peak_memory(l.pooled[0], "peak_rss_bytes"), 3.0 * mib);
    EXPECT_FALSE(peak_memory(l.pooled[0], "peak_device_bytes")); // all zero: a CPU case
    EXPECT_FALSE(peak_memory(l.pooled[0], "param_bytes"));       // not a training case
}

TEST(analysis_resources, cores_in_use_take_the_binding_into_account) {
    loaded l("res_cores", {one_case(1 << 20, 4, 1)}); // 4 threads, bound to one core each
    EXPECT_EQ(cores_in_use(l.pooled[0]), 2);
}

TEST(analysis_resources, superlinear_efficiency_is_suspect) {
    fixture_file base = one_case(1 << 20, 4, 1, 1), wide = one_case(1 << 20, 4, 4, 4);
    loaded l("res_super", {base, wide});
    ASSERT_EQ(l.pooled.size(), 2u);
    const pooled_case &p1 = l.pooled[0], &p4 = l.pooled[1];
    ASSERT_EQ(p4.world_size, 4);
    EXPECT_EQ(superlinear_note(p1, p4, 1.05), "");
    EXPECT_EQ(superlinear_note(p1, p4, 1.1), "");
    const std::string note = superlinear_note(p1, p4, 2.73);
    EXPECT_NE(note.find("suspect: efficiency 2.73 > 1.1"), std::string::npos) << note;
    EXPECT_NE(note.find("P=4 ran on 16 core(s) in all, the base P=1 on 1"), std::string::npos)
        << note;
    EXPECT_NE(note.find("--bind-to none"), std::string::npos) << note;
    EXPECT_EQ(note.find('\n'), std::string::npos);
    const std::string plain = superlinear_note(p1, p1, 1.2); // same cores: no culprit known
    EXPECT_NE(plain.find("superlinear"), std::string::npos) << plain;
}

TEST(analysis_resources, memory_regressions_over_the_threshold) {
    const std::string dir = ringscale::test_fixture::fixture_dir("res_cmp");
    loaded base("res_cmp_base", {one_case(100 << 20, 1, 1)});
    loaded same("res_cmp_same", {one_case(104 << 20, 1, 1)});
    loaded more("res_cmp_more", {one_case(120 << 20, 1, 1)});
    const comparison a = compare_sets(base.pooled, same.pooled, {});
    EXPECT_TRUE(memory_regressions(a, 0.05).empty());
    const comparison b = compare_sets(base.pooled, more.pooled, {});
    const auto flagged = memory_regressions(b, 0.05);
    ASSERT_EQ(flagged.size(), 1u);
    EXPECT_EQ(flagged[0].dataset, "peak_host_bytes");
    const std::string line = describe(flagged[0]);
    EXPECT_NE(line.find("100.0 MiB -> 120.0 MiB (+20.0%)"), std::string::npos) << line;
    std::filesystem::remove_all(dir);
}

TEST(analysis_resources, report_lists_suspect_efficiencies) {
    fixture_file f;
    for (int p : {1, 2, 4}) {
        fixture_case c;
        c.world_size = p;
        c.base_time_s = p == 4 ? 0.1 : 1.0 / p; // efficiency 2.5 at P=4
        c.noise = 0.001;
        f.cases.push_back(c);
    }
    loaded l("res_suspect", {f});
    const auto fams = find_families(l.pooled);
    ASSERT_EQ(fams.size(), 1u);
    scaling_options opt;
    const auto r = analyse_scaling(fams[0], opt);
    ASSERT_TRUE(r);
    const auto lines = suspect_efficiencies({*r});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find(" P=4: suspect: efficiency 2.5"), std::string::npos) << lines[0];
}
