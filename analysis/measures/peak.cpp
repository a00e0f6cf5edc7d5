#include "peak.hpp"

#include "src/base/backend.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

struct part_peaks {
    const char* pattern; ///< upper case; matched as a whole word of the device name
    const char* part;
    double fp32, tf32, bf16, fp16, fp8; ///< dense TFLOP/s (0: the part has no such unit)
};

// Dense peaks from the vendor datasheets. Where a datasheet gives only the figure "with
// sparsity" (marked * there), the dense figure is half of it.
// - NVIDIA H100 Tensor Core GPU datasheet (2023): H100 SXM FP32 67, TF32 989*, BF16 1,979*,
//   FP16 1,979*, FP8 3,958*; H100 PCIe FP32 51, TF32 756*, BF16 1,513*, FP16 1,513*,
//   FP8 3,026*; H100 NVL FP32 60, TF32 835*, BF16 1,671*, FP16 1,671*, FP8 3,341*.
// - NVIDIA H200 Tensor Core GPU datasheet (2024): H200 SXM as H100 SXM; H200 NVL as H100 NVL.
// - NVIDIA A100 Tensor Core GPU datasheet (2021): FP32 19.5, TF32 156, BF16 312, FP16 312
//   (dense; the same for the SXM4 and PCIe forms, 40 and 80 GB); no FP8 unit.
// - NVIDIA L40S datasheet (2023): FP32 91.6, TF32 183, BF16 362.05, FP16 362.05 (dense),
//   FP8 1,466*.
// More specific names come first: the first match wins.
constexpr part_peaks table[] = {
    {"H100 PCIE", "H100 PCIe", 51.0, 378.0, 756.5, 756.5, 1513.0},
    {"H100 NVL", "H100 NVL", 60.0, 417.5, 835.5, 835.5, 1670.5},
    {"H200 NVL", "H200 NVL", 60.0, 417.5, 835.5, 835.5, 1670.5},
    {"H100", "H100 SXM", 67.0, 494.5, 989.5, 989.5, 1979.0},
    {"H200", "H200 SXM", 67.0, 494.5, 989.5, 989.5, 1979.0},
    {"A100", "A100", 19.5, 156.0, 312.0, 312.0, 0.0},
    {"L40S", "L40S", 91.6, 183.0, 362.05, 362.05, 733.0},
};

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    return s;
}

bool word_char(char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0;
}

/// Whether `pattern` occurs in `text` with no letter or digit right before or after it.
bool has_word(const std::string& text, const std::string& pattern) {
    for (auto at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at + 1)) {
        const auto end = at + pattern.size();
        if ((at == 0 || !word_char(text[at - 1])) && (end == text.size() || !word_char(text[end])))
            return true;
    }
    return false;
}

} // namespace

std::string mfu_dtype_of(const std::string& recorded) {
    std::string d = recorded;
    std::transform(d.begin(), d.end(), d.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (d == "bf16" || d == "bfloat16")
        return "bf16";
    if (d == "fp16" || d == "float16" || d == "half")
        return "fp16";
    if (d == "tf32")
        return "tf32";
    if (d == "fp8" || d == "float8" || d == "e4m3" || d == "float8_e4m3fn")
        return "fp8";
    if (d.empty() || d == "fp32" || d == "float32" || d == "float")
        return "fp32";
    return d;
}

std::optional<dense_peak> gpu_dense_peak(const std::string& device_name, const std::string& dtype) {
    const std::string name = upper(device_name);
    const std::string t = mfu_dtype_of(dtype);
    for (const part_peaks& p : table) {
        if (!has_word(name, p.pattern))
            continue;
        const double tf = t == "bf16"   ? p.bf16
                          : t == "fp16" ? p.fp16
                          : t == "tf32" ? p.tf32
                          : t == "fp32" ? p.fp32
                          : t == "fp8"  ? p.fp8
                                        : 0.0;
        if (tf <= 0)
            return std::nullopt;
        return dense_peak{p.part, t, tf};
    }
    return std::nullopt;
}

mfu_figure case_mfu(const case_data& c, const std::optional<double>& flops_per_rank,
                    const std::optional<double>& peak_tflops) {
    mfu_figure f;
    if (!flops_per_rank)
        return f;
    const std::string recorded = c.text(schema::attr::mfu_dtype, c.text(schema::attr::dtype));
    if (peak_tflops) {
        f.peak = dense_peak{"--peak", mfu_dtype_of(recorded), *peak_tflops};
    } else {
        std::string device = c.text(schema::attr::device);
        std::string name;
        if (c.file) {
            if (auto it = c.file->meta.find(schema::attr::device);
                device.empty() && it != c.file->meta.end())
                device = it->second.text;
            if (auto it = c.file->meta.find(schema::meta_attr::device_name);
                it != c.file->meta.end())
                name = it->second.text;
        }
        if (find_device_kind(device) != device_kind::cuda)
            return f;
        f.peak = gpu_dense_peak(name, recorded);
        if (!f.peak) {
            f.note = fmt::format("MFU: no dense {} peak known for device '{}'; pass --peak TFLOPS",
                                 mfu_dtype_of(recorded), name.empty() ? "unknown" : name);
            return f;
        }
    }
    f.percent = 100.0 * *flops_per_rank / (f.peak->tflops * 1e12);
    return f;
}

} // namespace ringscale::analysis
