// Model FLOP utilisation (MFU): a case's achieved FLOP/s per rank as a share of its device's
// dense peak for the dtype it computes in. The peaks are a table of vendor datasheet figures
// (dense, no sparsity) matched on the device name recorded in /meta; `--peak TFLOPS`
// overrides it. Unlike the sanity gate's table (sanity.hpp), which is a generous upper bound,
// this one names the exact part (H100 SXM vs PCIe) and tells TF32 from plain FP32.
#pragma once

#include "analysis/cases/results.hpp"

#include <optional>
#include <string>

namespace ringscale::analysis {

/// One device's dense peak for one dtype.
struct dense_peak {
    std::string part;  ///< "H100 SXM", "A100", ... ("--peak" when the user stated it)
    std::string dtype; ///< bf16 | fp16 | fp8 | tf32 | fp32
    double tflops = 0; ///< TFLOP/s (1e12 FLOP/s) per device
};

/// The dtype an MFU is taken against, from a recorded dtype name: bf16 ("bf16", "bfloat16"),
/// fp16 ("fp16", "float16", "half"), fp8 ("fp8", "float8", "e4m3", "float8_e4m3fn": the peak
/// of fp8 GEMMs, E4M3 or E5M2 alike), tf32, fp32 ("fp32", "float32", "float", ""); anything
/// else (fp64, ...) is returned lower-cased and has no table entry.
std::string mfu_dtype_of(const std::string& recorded);

/// Dense peak of the GPU called `device_name` (as CUDA names it, e.g. "NVIDIA H100 80GB
/// HBM3", "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB") for `dtype` (a name mfu_dtype_of
/// understands); nullopt for a part or dtype the table does not hold. Case-insensitive; a
/// part name matches only as a whole word ("GH200" is not an H200).
std::optional<dense_peak> gpu_dense_peak(const std::string& device_name, const std::string& dtype);

/// MFU of one case, in percent, and what it was taken against.
struct mfu_figure {
    std::optional<double> percent;  ///< 100 * FLOP/s per rank / peak; nullopt: not known
    std::optional<dense_peak> peak; ///< the peak used
    std::string note;               ///< one line when a GPU case has no known peak
};

/// MFU of case `c` at `flops_per_rank` FLOP/s (nothing when that is unknown): against `peak_tflops`
/// when the user gave one (any device), else against the table for a GPU case (device "cuda"),
/// matched on /meta device_name and the case's mfu_dtype (else dtype) attribute. CPU cases without
/// `peak_tflops` get neither figure nor note; a GPU case the table does not know gets a note.
mfu_figure case_mfu(const case_data& c, const std::optional<double>& flops_per_rank,
                    const std::optional<double>& peak_tflops);

} // namespace ringscale::analysis
