// TEST FIXTURE (not the launcher's writer): writes schema-conformant ringscale/1 files from
// synthetic, seeded data with src/h5.hpp, for the ringscale-stats tests and benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringscale::test_fixture {

/// One synthetic case. Per-rank times are base_time_s x rank_skew[r] x exp(noise x N(0,1)),
/// warm-up rows 3x slower; or exactly `explicit_time_s` ([warmup + iterations] x world).
struct fixture_case {
    std::string job = "ring_attention";
    std::string variant = "zigzag";
    int world_size = 4;
    std::string scaling = "strong";
    std::string status = "ok";
    std::string error;
    std::vector<std::pair<std::string, std::string>> text_params = {
        {"device", "cpu"}, {"comm", "mpi"}, {"dtype", "fp32"}};
    std::vector<std::pair<std::string, std::int64_t>> int_params = {{"seq_len", 4096}};
    std::vector<std::pair<std::string, double>> float_params; ///< flops_per_iter, ...
    int warmup = 2;
    int iterations = 20; ///< measured iterations
    double base_time_s = 1e-3;
    double noise = 0.02;           ///< log-normal sigma
    std::vector<double> rank_skew; ///< per-rank factor (default 1)
    double comm_fraction = 0.3;    ///< share of time_s in comm_wait_s; compute_s is the rest
    bool with_phases = true;       ///< write compute_s and comm_wait_s
    bool with_loss = false;
    std::vector<double> explicit_time_s;
    std::uint64_t seed = 1;
};

struct fixture_file {
    std::string schema = "ringscale/1";
    bool complete = true;
    std::string git_commit = "fixture0000";
    std::string device_name = "fixture CPU";
    int threads_per_rank = 1;
    std::vector<fixture_case> cases;
};

/// Write one results file (truncates `path`).
void write_fixture_file(const std::string& path, const fixture_file& f);

/// A fresh empty directory /tmp/ringscale_fixture_<tag>_<pid>.
std::string fixture_dir(const std::string& tag);

} // namespace ringscale::test_fixture
