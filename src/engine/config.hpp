// The launcher's resolved configuration: a plain struct, filled by cli.cpp (the only file
// that sees Boost.Program_options) and read by everything else.
#pragma once

#include "src/base/backend.hpp"
#include "src/engine/params.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringscale {

enum class validate_mode { automatic, on, off };

/// --accuracy: measure the attention cases' accuracy against fp64 on sampled rows (on), never
/// (off), or where it costs at most about 5% of the case (automatic).
enum class accuracy_mode { automatic, on, off };

struct launch_config {
    std::vector<std::string> jobs;   ///< jobs to run, in order
    jobs::param_lists params;        ///< every job option with its value list (defaults filled)
    std::vector<std::string> given;  ///< options the user set explicitly (file or command line)
    std::string output = "results/"; ///< a directory, or a path ending in .h5
    int warmup = 5;
    int iters = 20;
    int repeat = 1; ///< --repeat: run the planned cases this many times, interleaved
    device_kind device = device_kind::cpu; ///< --device, parsed
    comm_kind comm = comm_kind::mpi;       ///< --comm, parsed
    std::string attn_kernel = "auto";      ///< --attn-kernel: auto | sm80 | sm90 (CUDA attention)
    validate_mode validate = validate_mode::automatic;
    accuracy_mode accuracy = accuracy_mode::automatic;
    std::int64_t accuracy_sample = 64; ///< --accuracy-sample: rows per head
    int threads = 0;                   ///< 0 = cores per node / ranks per node
    std::uint64_t seed = 1;
    bool dry_run = false;
    double timeout_s = 600; ///< watchdog: longest any blocking wait may take
    bool resume = false;    ///< skip cases already completed in the output directory
    int sentinel_every = 0; ///< --sentinel: a drift probe every N cases; 0 auto; -1 none
    int trace = 0; ///< --trace: iterations' events kept per case (0 off, 1 median, 2 + slowest)
    std::string job_file;             ///< path of the job file, if any
    std::vector<std::string> cmdline; ///< argv as given
    /// --label key=value (repeatable): what the user tracks beside the launcher's metadata (a
    /// stack commit, a driver version), written to /meta as label.<key>; not part of any case's
    /// identity. Sorted by key, each key once (parse_label checks both halves).
    std::vector<std::pair<std::string, std::string>> labels;
    std::string resolved_text;      ///< "key = value" lines: the job file that reproduces this run
    std::vector<std::string> notes; ///< one-line notes for rank 0 to print (duplicates removed)
};

} // namespace ringscale
