// The stored-case tests' fixture (tests/base/test_stored_*.cpp): a sound two-rank case, and a
// case written to a new HDF5 file, its stored group edited, and read back the way
// ringscale-stats and --resume read it.
#pragma once

#include "src/base/case_record.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/stored_case.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace ringscale::testing_support {

/// A path in /tmp of this process' own: ringscale_test_<what>_<tag>_<pid>.h5.
inline std::string temp_h5_path(const std::string& what, const std::string& tag) {
    return "/tmp/ringscale_test_" + what + "_" + tag + "_" + std::to_string(getpid()) + ".h5";
}

/// A finished case of `job` on two ranks: no warm-up, one timed row (1 s and 2 s), no
/// communication wait, no memory.
inline results::case_record two_rank_case(const std::string& job) {
    results::case_record r;
    r.identity = {{schema::attr::job, job}, {schema::attr::world_size, std::int64_t{2}}};
    r.run = {{schema::attr::warmup, std::int64_t{0}}, {schema::attr::iterations, std::int64_t{1}}};
    r.outcome = {{schema::attr::status, std::string(schema::status::ok)}};
    r.world = 2;
    r.rows = 1;
    r.time_s = r.compute_s = {1, 2};
    r.comm_wait_s = {0, 0};
    r.is_warmup = {0};
    r.peak_host_bytes = r.peak_device_bytes = r.peak_rss_bytes = {0, 0};
    return r;
}

/// Writes `r` as case 0000 of a new file at `path`, lets `edit(group)` change the stored group,
/// reads the case back and removes the file.
template <class Edit>
results::case_record stored_round_trip(const std::string& path, const results::case_record& r,
                                       Edit edit) {
    std::remove(path.c_str());
    {
        auto f = h5::file::create(path);
        const h5::group g = f.root().create_group("0000");
        results::write_case_record(g, r);
        edit(g);
    }
    auto f = h5::file::open_read(path);
    results::case_record back = stored::read_case_record(f.root().open_group("0000"), 1 << 30);
    std::remove(path.c_str());
    return back;
}

} // namespace ringscale::testing_support
