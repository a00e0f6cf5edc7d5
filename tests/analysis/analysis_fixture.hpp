// TEST FIXTURE (not the launcher's writer): writes schema-conformant ringscale/2 files (or
// ringscale/1, flat attributes) from synthetic, seeded data with src/base/h5.hpp and the names of
// src/base/results_schema.hpp, for the ringscale-stats tests and benchmark.
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
    /// Identity attributes besides job, variant, world_size and scaling.
    std::vector<std::pair<std::string, std::string>> text_params = {
        {"device", "cpu"}, {"comm", "mpi"}, {"dtype", "fp32"}};
    std::vector<std::pair<std::string, std::int64_t>> int_params = {{"seq_len", 4096}};
    std::vector<std::pair<std::string, double>> float_params;   ///< derived: flops_per_iter, ...
    std::vector<std::pair<std::string, double>> outcome_params; ///< outcome: final_loss, ...
    int warmup = 2;
    int iterations = 20; ///< measured iterations
    double base_time_s = 1e-3;
    double noise = 0.02;           ///< log-normal sigma
    std::vector<double> rank_skew; ///< per-rank factor (default 1)
    double comm_fraction = 0.3;    ///< share of time_s in comm_wait_s; compute_s is the rest
    double compute_fraction = -1;  ///< share of time_s in compute_s (< 0: the rest, as above)
    bool with_phases = true;       ///< write compute_s and comm_wait_s
    /// CPU time per second of compute_s (and of time_s): when > 0, compute_cpu_s (and cpu_s)
    /// are written as that multiple of the phase (a rank that lost its core to others' load
    /// spends less CPU per wall second); 0: no CPU datasets, as in files before them.
    double cpu_per_wall_s = 0;
    bool with_loss = false; ///< also the training memory categories (param_bytes, ...)
    std::uint64_t peak_host_bytes = 1u << 20; ///< every rank's
    std::uint64_t peak_rss_bytes = 3u << 20;  ///< every rank's
    std::vector<double> rank_memory_skew;     ///< per-rank factor on the peaks (default 1)
    int affinity_cores = 0;                   ///< per rank; 0 = the file's threads_per_rank
    std::vector<double> explicit_time_s;
    /// The case's machine state (schema::machine_ds name -> one value per rank), written to
    /// /cases/NNNN/machine; empty: none, as in older files. The reader judges them
    /// (src/base/machine_marks.hpp) whatever the outcome says.
    std::vector<std::pair<std::string, std::vector<double>>> machine;
    /// train_step --numerics series (schema::numerics_datasets name -> one value per step),
    /// written to /cases/NNNN/numerics; empty: none.
    std::vector<std::pair<std::string, std::vector<double>>> numerics;
    std::uint64_t seed = 1;
};

struct fixture_file {
    std::string schema = "ringscale/2"; ///< or "ringscale/1": flat case attributes
    bool complete = true;
    std::string git_commit = "fixture0000";
    std::string device_name = "fixture CPU";
    int threads_per_rank = 1;
    std::string created_utc = "2025-01-01T00:00:00Z";
    std::string launch_id; ///< root launch_id ("" = none: the launch is known by its bytes)
    std::vector<std::pair<std::string, std::string>> labels;    ///< /meta label.KEY
    std::vector<std::pair<std::string, std::int64_t>> int_meta; ///< more /meta: launchdate, ...
    /// More /meta text: mpi_transport, mpi_library, ...
    std::vector<std::pair<std::string, std::string>> text_meta;
    std::vector<fixture_case> cases;
};

/// Write one results file (truncates `path`).
void write_fixture_file(const std::string& path, const fixture_file& f);

/// A fresh empty directory /tmp/ringscale_fixture_<tag>_<pid>.
std::string fixture_dir(const std::string& tag);

} // namespace ringscale::test_fixture
