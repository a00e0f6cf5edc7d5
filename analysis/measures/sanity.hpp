// The sanity gate, on by default: derived figures that cannot be true (FLOP/s above the
// device's peak, bandwidth above what the device's links or memory can move) are withheld with
// a reason instead of reported, and no-op cases (a collective on one rank moves nothing) are
// not rated at all.
#pragma once

#include "analysis/cases/results.hpp"

#include <optional>
#include <string>

namespace ringscale::analysis {

/// Limits the user stated on the command line (override the built-in table).
struct sanity_limits {
    std::optional<double> peak_gflops; ///< per rank (one device per rank)
    std::optional<double> link_gbs;    ///< GB/s (1e9 B/s) per rank (overrides the table)
    std::optional<double> peak_tflops; ///< --peak: dense peak per rank for MFU, TFLOP/s
};

/// Peak GFLOP/s per rank and where the number came from.
struct peak {
    double gflops;
    std::string source;
};

/// Normalised dtype: fp64, fp32, fp16, bf16 or fp8 (fp32 when unrecognised).
std::string normalise_dtype(const std::string& dtype);

/// Peak dense GFLOP/s of one device from the built-in table (vendor datasheets, dense, no
/// sparsity; fp32 on GPUs uses the TF32 tensor-core peak so the bound stays an upper bound).
/// CPUs: 64 FP32 (32 FP64) FLOP/cycle per core at 6 GHz times threads_per_rank, a ceiling no
/// current x86 or Arm core reaches without matrix engines (so bf16/fp16 are not bounded).
std::optional<peak> known_peak(const std::string& device, const std::string& device_name,
                               const std::string& dtype, int threads_per_rank);

/// Peak for a case: the user's --peak-gflops, else the table, else nullopt (unchecked).
std::optional<peak> case_peak(const case_data& c, const sanity_limits& limits);

/// The most bytes per second one rank can move, and where the number came from.
struct link_ceiling {
    double gbs; ///< GB/s (1e9 B/s), both directions of the rank's links together
    std::string source;
};

/// Built-in ceiling on a rank's bus or link bandwidth: GPUs by name (NVLink / Infinity Fabric
/// total of both directions, e.g. H100 900 GB/s, A100 600, B200 1800; 1800 for a GPU the table
/// does not know), CPUs 1000 GB/s (more than any socket's memory copy bandwidth, which bounds
/// shared-memory MPI). A figure above it is impossible, not fast.
link_ceiling known_link(const std::string& device, const std::string& device_name);

/// Ceiling for a case: the user's --link-gbs, else known_link of its device.
link_ceiling case_link(const case_data& c, const sanity_limits& limits);

/// Why a case must not be rated ("" when it may): a collective on one rank moves no data, so
/// any bandwidth it shows is a copy or nothing at all.
std::string noop_reason(const std::string& job, int world_size);

} // namespace ringscale::analysis
