// The sanity gate: derived figures that cannot be true (FLOP/s above the device's peak,
// bandwidth above a stated link rate) are withheld with a reason instead of reported.
#pragma once

#include "results.hpp"

#include <optional>
#include <string>

namespace ringscale::analysis {

/// Limits the user stated on the command line (override the built-in table).
struct sanity_limits {
    std::optional<double> peak_gflops; ///< per rank (one device per rank)
    std::optional<double> link_gbs;    ///< GB/s (1e9 B/s) per rank, one direction
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

} // namespace ringscale::analysis
