// The one case-record type (src/base/case_record.hpp): what the writer stores reads back the
// same, with its types; the step-time statistics the live table and the closing comparison use.
#include "src/base/case_record.hpp"
#include "src/base/error.hpp"
#include "src/base/stored_case.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace ringscale;
using results::case_record;

namespace {

std::string temp_path(const char* tag) {
    return std::string("/tmp/ringscale_test_case_record_") + tag + "_" + std::to_string(getpid()) +
           ".h5";
}

case_record sample() {
    case_record r;
    r.identity = {{schema::attr::job, std::string("collectives")},
                  {schema::attr::world_size, std::int64_t{2}}};
    r.run = {{schema::attr::warmup, std::int64_t{1}}, {schema::attr::iterations, std::int64_t{2}}};
    r.derived = {{schema::attr::flops_per_iter, 0.0}, {schema::attr::bytes, std::int64_t{4096}}};
    r.outcome = {{schema::attr::status, std::string(schema::status::ok)},
                 {schema::attr::max_abs_err, 0.5}};
    r.world = 2;
    r.rows = 3;
    r.time_s = {9, 9, 1, 3, 2, 5}; // warm-up row, then slowest ranks 3 and 5
    r.compute_s = {0, 0, 1, 1, 1, 1};
    r.comm_wait_s = {0, 0, 0.5, 1, 0, 2};
    r.is_warmup = {1, 0, 0};
    r.peak_host_bytes = {10, 20};
    r.peak_device_bytes = {0, 0};
    r.peak_rss_bytes = {30, 40};
    r.threads = {1, 1};
    r.affinity_cores = {2, 2};
    r.affinity_list = {"0-1", "2-3"};
    r.per_iteration[schema::ds_loss] = {3.0, 2.5, 2.0};
    r.per_rank[schema::ds_param_bytes] = {100, 100};
    r.case_key = "0123456789abcdef";
    return r;
}

} // namespace

TEST(case_record, writes_and_reads_back_with_types) {
    const std::string path = temp_path("rt");
    const case_record w = sample();
    {
        auto f = h5::file::create(path);
        results::write_case_record(f.root().create_group("0000"), w);
    }
    const auto f = h5::file::open_read(path);
    const h5::group g = f.root().open_group("0000");
    const case_record r = stored::read_case_record(g, 1 << 20);
    EXPECT_EQ(r.identity, w.identity);
    EXPECT_EQ(r.run, w.run);
    EXPECT_EQ(r.derived, w.derived);
    EXPECT_EQ(r.outcome, w.outcome);
    EXPECT_EQ(r.case_key, w.case_key);
    EXPECT_EQ(r.rows, 3);
    EXPECT_EQ(r.world, 2);
    EXPECT_EQ(r.time_s, w.time_s);
    EXPECT_EQ(r.compute_s, w.compute_s);
    EXPECT_EQ(r.comm_wait_s, w.comm_wait_s);
    EXPECT_EQ(r.is_warmup, w.is_warmup);
    EXPECT_EQ(r.peak_host_bytes, w.peak_host_bytes);
    EXPECT_EQ(r.peak_rss_bytes, w.peak_rss_bytes);
    EXPECT_EQ(r.threads, w.threads);
    EXPECT_EQ(r.affinity_cores, w.affinity_cores);
    EXPECT_EQ(r.per_iteration, w.per_iteration);
    EXPECT_EQ(r.per_rank, w.per_rank);
    std::remove(path.c_str());
}

TEST(case_record, refuses_timings_of_the_wrong_shape) {
    const std::string path = temp_path("shape");
    {
        auto f = h5::file::create(path);
        case_record w = sample();
        w.comm_wait_s.pop_back();
        w.comm_wait_s.pop_back(); // written as [2, 2]: one row short
        w.rows = 2;
        auto g = f.root().create_group("0000");
        auto h = f.root().create_group("0001");
        for (const schema::attr_group group : schema::all_groups) {
            results::write_attrs(g.create_group(schema::group_name(group)), w.group(group));
            results::write_attrs(h.create_group(schema::group_name(group)), w.group(group));
        }
        g.write<double>(schema::ds_time_s, w.time_s, {3, 2});
        g.write<double>(schema::ds_comm_wait_s, w.comm_wait_s, {2, 2});
        h.write<double>(schema::ds_time_s, {1, 2, 3}, {3});
    }
    const auto f = h5::file::open_read(path);
    const auto refusal = [&](const char* group) {
        try {
            stored::read_case_record(f.root().open_group(group), 1 << 20);
        } catch (const error& e) {
            return std::string(e.what());
        }
        return std::string("read");
    };
    EXPECT_NE(refusal("0000").find("dataset 'comm_wait_s' has shape [2, 2], expected [3, 2]"),
              std::string::npos)
        << refusal("0000");
    EXPECT_NE(refusal("0001").find("dataset 'time_s' has shape [3], not [iterations, ranks]"),
              std::string::npos)
        << refusal("0001");
    std::remove(path.c_str());
}

TEST(case_record, lookups_and_step_statistics) {
    const case_record r = sample();
    EXPECT_EQ(r.status(), "ok");
    EXPECT_EQ(r.text(schema::attr::bytes), "4096");
    EXPECT_EQ(r.number(schema::attr::bytes), 4096.0);
    EXPECT_EQ(r.number(schema::attr::job), std::nullopt);
    EXPECT_EQ(r.text("absent"), "");
    EXPECT_EQ(r.flat().size(), 8u);
    EXPECT_EQ(r.slowest_timed(r.time_s), (std::vector<double>{3, 5}));
    EXPECT_DOUBLE_EQ(r.median_step_s(), 4.0);
    EXPECT_DOUBLE_EQ(r.median_slowest(r.comm_wait_s), 1.5);
    EXPECT_DOUBLE_EQ(case_record{}.median_step_s(), 0.0);
}
