// Reading both schemas: ringscale/1 files written by the launcher before the schema split
// (tests/data/ringscale1, checked in) form the scaling families that ringscale/1 keys lost;
// ringscale/2 identities key pooling and compare; mixed and unknown schemas get one line.
#include "analysis/cases/case_groups.hpp"
#include "analysis/cases/cases.hpp"
#include "analysis/comparisons/compare.hpp"
#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <filesystem>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

const std::string data_dir = RINGSCALE_TEST_DATA_DIR "/ringscale1";

/// P of each family whose label starts with `prefix`, one list per family.
std::vector<std::vector<int>> family_ps(const std::vector<family>& fams,
                                        const std::string& prefix) {
    std::vector<std::vector<int>> out;
    for (const family& f : fams)
        if (f.label.rfind(prefix, 0) == 0) {
            out.emplace_back();
            for (const pooled_case* m : f.members)
                out.back().push_back(m->world_size);
        }
    return out;
}

fixture_case training(int p, double final_loss) {
    fixture_case c;
    c.job = "train_step";
    c.variant = "ddp";
    c.world_size = p;
    c.int_params = {{"layers", 2}, {"dp", 0}};
    c.float_params = {{"parameters", 1e6}};
    c.outcome_params = {{"final_loss", final_loss}};
    c.with_loss = true;
    return c;
}

} // namespace

TEST(analysis_schema, version_1_launcher_files_form_families) {
    const result_set rs = load_results({data_dir}, true);
    ASSERT_EQ(rs.files.size(), 6u);
    for (const case_data& c : rs.cases) {
        EXPECT_EQ(c.file->schema, "ringscale/1");
        EXPECT_EQ(c.identity.count("final_loss"), 0u) << c.label();
        EXPECT_EQ(c.identity.count("memory_convention"), 0u) << c.label();
        EXPECT_EQ(c.identity.count("ulysses_degree") && c.job != "context_parallel", false);
        EXPECT_EQ(c.identity.at("threads").text, "0"); // from /meta/config
        EXPECT_FALSE(c.memory_bytes.at("peak_rss_bytes").empty());
    }
    const auto pooled = pool_cases(rs.cases); // families point into it: keep it alive
    const auto fams = find_families(pooled);
    EXPECT_EQ(family_ps(fams, "train_step/ddp"), (std::vector<std::vector<int>>{{1, 2}}));
    EXPECT_EQ(family_ps(fams, "context_parallel/ulysses"), (std::vector<std::vector<int>>{{2, 4}}));
    EXPECT_EQ(family_ps(fams, "context_parallel/hybrid"), (std::vector<std::vector<int>>{{2, 4}}));
    EXPECT_EQ(family_ps(fams, "collectives/allreduce").size(), 2u); // two sizes, P = 1, 2
    for (const auto& ps : family_ps(fams, "collectives/"))
        EXPECT_EQ(ps, (std::vector<int>{1, 2}));
}

TEST(analysis_schema, training_cases_match_without_equal_losses) {
    const std::string dir = ringscale::test_fixture::fixture_dir("schema_loss");
    fixture_file a, b;
    a.cases = {training(1, 4.651622565721623), training(2, 4.6516225657)};
    b.cases = {training(1, 4.7), training(2, 4.8)};
    write_fixture_file(dir + "/a.h5", a);
    write_fixture_file(dir + "/b.h5", b);
    const result_set ra = load_results({dir + "/a.h5"}, true);
    const result_set rb = load_results({dir + "/b.h5"}, true);
    const auto pa = pool_cases(ra.cases), pb = pool_cases(rb.cases);
    EXPECT_EQ(find_families(pa).size(), 1u);
    const comparison cmp = compare_sets(pa, pb, {});
    EXPECT_EQ(cmp.matched.size(), 2u);
    EXPECT_EQ(ra.cases[0].number("final_loss"), 4.651622565721623); // outcome, still read
    EXPECT_EQ(ra.cases[0].max_memory("param_bytes"), (1u << 20) / 8.0);
    std::filesystem::remove_all(dir);
}

TEST(analysis_schema, mixed_schemas_pool_with_one_note) {
    const std::string dir = ringscale::test_fixture::fixture_dir("schema_mixed");
    fixture_file old_file, new_file;
    old_file.schema = "ringscale/1";
    old_file.cases = {fixture_case{}};
    new_file.cases = {fixture_case{}};
    write_fixture_file(dir + "/old.h5", old_file);
    write_fixture_file(dir + "/new.h5", new_file);
    const result_set rs = load_results({dir}, true);
    ASSERT_EQ(rs.cases.size(), 2u);
    EXPECT_EQ(case_key(rs.cases[0]), case_key(rs.cases[1]));
    const std::string note = mixed_schema_note(rs.cases);
    EXPECT_NE(note.find("ringscale/1"), std::string::npos) << note;
    EXPECT_EQ(note.find('\n'), std::string::npos);
    EXPECT_EQ(mixed_schema_note({rs.cases[0]}), "");
    std::filesystem::remove_all(dir);
}

TEST(analysis_schema, unknown_schema_is_one_line) {
    const std::string dir = ringscale::test_fixture::fixture_dir("schema_bad");
    fixture_file f;
    f.schema = "ringscale/9";
    f.cases = {fixture_case{}};
    write_fixture_file(dir + "/bad.h5", f);
    try {
        load_results({dir + "/bad.h5"}, false);
        FAIL() << "no error";
    } catch (const ringscale::config_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("unknown schema version 'ringscale/9'"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST(analysis_schema, config_values) {
    const std::string text = "dp = 0\nulysses-degree = 2\nthreads = 1,2\n";
    EXPECT_EQ(config_value(text, "dp"), "0");
    EXPECT_EQ(config_value(text, "ulysses_degree"), "2");
    EXPECT_EQ(config_value(text, "threads"), ""); // a sweep list: no single identity
    EXPECT_EQ(config_value(text, "cp"), "");
}

TEST(analysis_schema, version_1_training_cases_drop_other_jobs_options) {
    const std::string dir = ringscale::test_fixture::fixture_dir("schema_v1_train");
    fixture_file old_file;
    old_file.schema = "ringscale/1";
    old_file.cases = {training(2, 4.6)};
    old_file.cases[0].text_params.emplace_back("op", "allreduce"); // from --job collectives,...
    old_file.cases[0].int_params.emplace_back("seq_len", 512);
    write_fixture_file(dir + "/old.h5", old_file);
    const result_set rs = load_results({dir}, true);
    ASSERT_EQ(rs.cases.size(), 1u);
    EXPECT_EQ(rs.cases[0].identity.count("op"), 0u);
    EXPECT_EQ(rs.cases[0].identity.count("seq_len"), 0u);
    EXPECT_EQ(rs.cases[0].identity.count("layers"), 1u);
    EXPECT_EQ(rs.cases[0].identity.count("final_loss"), 0u);
    std::filesystem::remove_all(dir);
}
