// The machine state read back (src/base/stored_machine.hpp): what the writer stores reads back
// the same; hostile or contradictory fields are dropped with one line while the case stays; a
// file cannot hide a mark its figures show; the sentinel's probes read back and are checked.
#include "src/base/stored_machine.hpp"
#include "tests/support/stored_round_trip.hpp"

#include <cstdio>
#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::testing_support;
using results::case_record;
namespace ds = schema::machine_ds;

namespace {

case_record sample() {
    case_record r = two_rank_case("collectives");
    r.outcome[schema::attr::contended] = std::int64_t{0};
    r.outcome[schema::attr::contention] = std::string("");
    r.machine = {{ds::foreign_load, {0.01, 0.02}},
                 {ds::load_resolution, {0.01, 0.01}},
                 {ds::load_cores, {2, 2}},
                 {ds::steal, {0, 0.01}},
                 {ds::iowait, {0, 0}},
                 {ds::nivcsw, {5, 7}}};
    return r;
}

template <class Edit>
case_record round_trip(const char* tag, const case_record& r, Edit edit) {
    return stored_round_trip(temp_h5_path("stored_machine", tag), r, edit);
}

} // namespace

TEST(stored_machine, fields_read_back_as_written) {
    const case_record back = round_trip("same", sample(), [](const h5::group&) {});
    EXPECT_EQ(back.machine, sample().machine);
    EXPECT_TRUE(back.read_notes.empty());
    EXPECT_EQ(stored::contention_of(back), "");
}

TEST(stored_machine, an_older_case_without_fields_reads_unchanged) {
    case_record old = sample();
    old.machine.clear();
    old.outcome.erase(schema::attr::contended);
    old.outcome.erase(schema::attr::contention);
    const case_record back = round_trip("old", old, [](const h5::group&) {});
    EXPECT_TRUE(back.machine.empty());
    EXPECT_TRUE(back.read_notes.empty());
    EXPECT_EQ(stored::contention_of(back), "");
    EXPECT_EQ(back.time_s, old.time_s);
}

TEST(stored_machine, hostile_fields_are_dropped_with_one_line_and_the_case_stays) {
    case_record r = sample();
    r.machine[ds::steal] = {0.7, 0};
    r.machine[ds::iowait] = {0.6, 0};
    const case_record back = round_trip("contradict", r, [](const h5::group&) {});
    EXPECT_TRUE(back.machine.empty());
    ASSERT_EQ(back.read_notes.size(), 1u);
    EXPECT_EQ(back.read_notes[0], "machine state dropped: machine/steal and iowait [rank 0] add "
                                  "up to 1.3 of the cores' time: more than all of it");
    EXPECT_EQ(back.time_s, r.time_s);
    // A dataset of the wrong shape: refused before it is read, dropped the same way.
    const case_record shaped = round_trip("shape", sample(), [](const h5::group& g) {
        g.open_group(schema::machine_group).write<double>("cpu_mhz", {1, 2, 3}, {3});
    });
    ASSERT_EQ(shaped.read_notes.size(), 1u);
    EXPECT_EQ(shaped.read_notes[0],
              "machine state dropped: machine/cpu_mhz is not one value per rank (2 ranks)");
}

TEST(stored_machine, a_mark_is_kept_or_derived_never_hidden) {
    case_record r = sample();
    r.outcome[schema::attr::contended] = std::int64_t{1};
    r.outcome[schema::attr::contention] = std::string("the launcher's reason");
    EXPECT_EQ(stored::contention_of(round_trip("kept", r, [](const h5::group&) {})),
              "the launcher's reason");
    r = sample(); // says 0, but its own figures show a busy loop beside the ranks
    r.machine[ds::foreign_load] = {0.9, 0.9};
    EXPECT_EQ(stored::contention_of(round_trip("hidden", r, [](const h5::group&) {})),
              "other processes used 0.90 of the 2 core(s) the ranks may use (+-0.01)");
    r = sample();
    r.outcome[schema::attr::contended] = std::int64_t{7};
    const case_record bad = round_trip("seven", r, [](const h5::group&) {});
    ASSERT_EQ(bad.read_notes.size(), 1u);
    EXPECT_EQ(bad.read_notes[0], "outcome 'contended' is 7, not 0 or 1: mark dropped");
    EXPECT_EQ(bad.find(schema::attr::contended), nullptr);
}

TEST(stored_machine, sentinel_probes_read_back_and_are_checked) {
    const std::string path = temp_h5_path("stored_machine", "sentinel");
    std::remove(path.c_str());
    auto write_probe = [](const h5::group& s, const char* name, int before, double c, double a) {
        const h5::group g = s.create_group(name);
        g.set_attr(schema::sentinel_attr::before_case, before);
        g.set_attr(schema::sentinel_attr::compute_s, c);
        g.set_attr(schema::sentinel_attr::allreduce_s, a);
        g.create_group(schema::machine_group).write<double>(ds::foreign_load, {0.01, 0.02}, {2});
    };
    {
        auto f = h5::file::create(path);
        const h5::group s = f.root().create_group(schema::sentinel_group);
        write_probe(s, "0000", 0, 1e-3, 1e-4);
        // 2.6x: a lone slow probe drifts only beyond twice the tolerance
        write_probe(s, "0001", 4, 2.6e-3, 1e-4);
    }
    {
        auto f = h5::file::open_read(path);
        const stored::sentinel_record ok = stored::read_sentinel(f.root(), 4, 1 << 30);
        EXPECT_EQ(ok.problem, "");
        ASSERT_EQ(ok.probes.size(), 2u);
        EXPECT_EQ(ok.probes[1].before_case, 4);
        EXPECT_DOUBLE_EQ(ok.probes[1].compute_s, 2.6e-3);
        EXPECT_EQ(ok.probes[1].machine.at(ds::foreign_load), (std::vector<double>{0.01, 0.02}));
        EXPECT_TRUE(machine::judge_drift(ok.probes, 4).drifted);
        const stored::sentinel_record few = stored::read_sentinel(f.root(), 3, 1 << 30);
        EXPECT_TRUE(few.probes.empty()); // probe 1 says case 4 of a file with 3
        EXPECT_EQ(few.problem, "sentinel dropped: sentinel probe 1 says it ran before case 4: "
                               "probes run in order, between cases 0 and 3");
    }
    std::remove(path.c_str());
}
