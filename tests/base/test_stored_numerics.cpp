// train_step --numerics' series read back (src/base/stored_machine.hpp, read_numerics): what
// the writer stores reads back the same, non-finite values included (a diverged run is a
// result); a file without the group reads unchanged; a hostile group (a series of another
// length, two dimensions) is dropped with one line while the case stays.
#include "src/base/numerics_schema.hpp"
#include "src/base/stored_machine.hpp"
#include "tests/support/stored_round_trip.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::testing_support;
using results::case_record;

namespace {

case_record sample() {
    case_record r = two_rank_case("train_step");
    for (const std::string& name : schema::numerics_datasets())
        r.numerics[name] = {1.5, 0.25, 0.125};
    r.numerics["loss"][2] = INFINITY; // diverged at step 3
    return r;
}

template <class Edit>
case_record round_trip(const char* tag, const case_record& r, Edit edit) {
    return stored_round_trip(temp_h5_path("stored_numerics", tag), r, edit);
}

} // namespace

TEST(stored_numerics, series_read_back_as_written) {
    const case_record back = round_trip("same", sample(), [](const h5::group&) {});
    ASSERT_EQ(back.numerics.size(), schema::numerics_datasets().size());
    EXPECT_EQ(back.numerics.at("ref_loss"), (std::vector<double>{1.5, 0.25, 0.125}));
    EXPECT_TRUE(std::isinf(back.numerics.at("loss")[2]));
    EXPECT_TRUE(back.read_notes.empty());
}

TEST(stored_numerics, a_case_without_them_reads_unchanged) {
    case_record r = sample();
    r.numerics.clear();
    const case_record back = round_trip("none", r, [](const h5::group&) {});
    EXPECT_TRUE(back.numerics.empty());
    EXPECT_TRUE(back.read_notes.empty());
    EXPECT_EQ(back.time_s, r.time_s);
}

TEST(stored_numerics, a_hostile_group_is_dropped_with_one_line) {
    const case_record back = round_trip("short", sample(), [](const h5::group& g) {
        const h5::group m = g.open_group(schema::numerics_group);
        m.write<double>("zz_unknown", {1}, {1}); // not a series: ignored
        g.open_group(schema::numerics_group).write<double>("junk", {1, 2}, {1, 2});
    });
    EXPECT_EQ(back.numerics.size(), schema::numerics_datasets().size()); // unknown names ignored
    case_record r = sample();
    r.numerics["floor_loss"] = {1, 2}; // a series of another length
    const case_record bad = round_trip("len", r, [](const h5::group&) {});
    EXPECT_TRUE(bad.numerics.empty());
    ASSERT_EQ(bad.read_notes.size(), 1u);
    EXPECT_NE(bad.read_notes[0].find("numerics dropped"), std::string::npos) << bad.read_notes[0];
    EXPECT_EQ(std::get<std::string>(bad.outcome.at("status")), "ok"); // the case stays
}

TEST(stored_numerics, a_group_from_before_the_fp64_reference_reads_unchanged) {
    case_record r = sample();
    for (auto it = r.numerics.begin(); it != r.numerics.end();)
        it = it->first.find("fp64") != std::string::npos ? r.numerics.erase(it) : std::next(it);
    ASSERT_EQ(r.numerics.size(), 11u); // the series files held before it
    const case_record back = round_trip("old", r, [](const h5::group&) {});
    EXPECT_EQ(back.numerics, r.numerics);
    EXPECT_TRUE(back.read_notes.empty());
}
