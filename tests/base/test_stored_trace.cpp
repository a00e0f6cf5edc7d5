// --trace's group read back (src/base/stored_trace.hpp): what the writer stores reads back the
// same; a file without the group reads unchanged; a hostile group (a column missing or of
// another length, a kind outside the enum, a rank outside the case, an event ending before it
// starts) is dropped with one line while the case stays.
#include "src/base/stored_trace.hpp"
#include "src/base/trace_events.hpp"
#include "tests/support/stored_round_trip.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace ringscale;
using namespace ringscale::testing_support;
using results::case_record;

namespace {

case_record sample() {
    case_record r = two_rank_case("ring_attention");
    trace::event send;
    send.what = trace::kind::send;
    send.rank = 0;
    send.peer = 1;
    send.tag = 1;
    send.seq = 0;
    send.iteration = 0;
    send.start_s = 0.001;
    send.end_s = 0.002;
    send.bytes = 4096;
    trace::event recv = send;
    recv.what = trace::kind::recv;
    recv.rank = 1;
    recv.peer = 0;
    r.trace = trace::to_columns({send, recv});
    r.trace["kept_iteration"] = {0};
    r.trace["kept_reason"] = {0};
    r.trace["kept_skew_s"] = {0};
    r.trace["kept_dropped"] = {0};
    r.trace["rank_host"] = {0, 0};
    return r;
}

template <class Edit>
case_record round_trip(const char* tag, const case_record& r, Edit edit) {
    return stored_round_trip(temp_h5_path("stored_trace", tag), r, edit);
}

} // namespace

TEST(stored_trace, events_read_back_as_written) {
    const case_record back = round_trip("same", sample(), [](const h5::group&) {});
    EXPECT_TRUE(back.read_notes.empty());
    EXPECT_EQ(back.trace, sample().trace);
    const auto events = trace::from_columns(back.trace);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(trace::pair_transfers(events).size(), 1u);
}

TEST(stored_trace, a_case_without_one_reads_unchanged) {
    case_record r = sample();
    r.trace.clear();
    const case_record back = round_trip("none", r, [](const h5::group&) {});
    EXPECT_TRUE(back.trace.empty());
    EXPECT_TRUE(back.read_notes.empty());
    EXPECT_EQ(back.time_s, r.time_s);
}

TEST(stored_trace, a_hostile_group_is_dropped_with_one_line) {
    const std::vector<std::pair<std::string, std::vector<double>>> edits = {
        {"kind", {99, 7}},          // not a kind
        {"rank", {0, 5}},           // a rank the case did not run
        {"end_s", {0.0005, 0.002}}, // ends before it starts
        {"seq", {0}},               // another length
        {"rank_host", {0, 0, 0}},   // more ranks than the case
    };
    for (const auto& [column, values] : edits) {
        case_record r = sample();
        r.trace[column] = values;
        const case_record back = round_trip("hostile", r, [](const h5::group&) {});
        EXPECT_TRUE(back.trace.empty()) << column;
        ASSERT_EQ(back.read_notes.size(), 1u) << column;
        EXPECT_EQ(back.read_notes[0].rfind("trace dropped: ", 0), 0u) << back.read_notes[0];
        EXPECT_EQ(back.status(), schema::status::ok); // the case stays
    }
    case_record r = sample();
    r.trace.erase("flops"); // a column missing
    const case_record back = round_trip("missing", r, [](const h5::group&) {});
    EXPECT_TRUE(back.trace.empty());
    EXPECT_EQ(back.read_notes.size(), 1u);
}
