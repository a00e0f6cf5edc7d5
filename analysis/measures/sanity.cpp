#include "sanity.hpp"

#include "src/base/backend.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

struct gpu_peak {
    const char* name;                   ///< matched as a substring of the upper-cased device name
    double fp64, fp32, fp16, bf16, fp8; ///< TFLOP/s, dense
};

// Dense tensor-core peaks of the fastest (SXM/OAM) form of each part, from vendor datasheets.
constexpr gpu_peak gpu_table[] = {
    {"B200", 40, 1100, 2250, 2250, 4500},
    {"H200", 67, 494.7, 989.4, 989.4, 1978.9},
    {"H100", 67, 494.7, 989.4, 989.4, 1978.9},
    {"H800", 67, 494.7, 989.4, 989.4, 1978.9},
    {"A100", 19.5, 156, 312, 312, 0},
    {"A800", 19.5, 156, 312, 312, 0},
    {"L40S", 1.4, 183, 362, 362, 733},
    {"V100", 7.8, 15.7, 125, 0, 0},
    {"MI300X", 163.4, 653.7, 1307.4, 1307.4, 2614.9},
    {"MI250X", 95.7, 95.7, 383, 383, 0},
};

struct gpu_link {
    const char* name; ///< matched as a substring of the upper-cased device name
    double gbs;       ///< GB/s, both directions of all links of one device
};

// NVLink / Infinity Fabric per device, both directions summed (vendor datasheets): NVLS
// in-switch reductions can lift an all-reduce's busbw above one direction, never above both.
constexpr gpu_link link_table[] = {{"B200", 1800}, {"B100", 1800},   {"H200", 900},
                                   {"H100", 900},  {"H800", 900},    {"A100", 600},
                                   {"A800", 400},  {"V100", 300},    {"L40S", 64},
                                   {"L4", 64},     {"MI300X", 1024}, {"MI250X", 800}};

constexpr double cpu_link_gbs = 1000;    // above any socket's memory copy bandwidth
constexpr double unknown_gpu_gbs = 1800; // the fastest device the table knows

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    return s;
}

} // namespace

std::string normalise_dtype(const std::string& dtype) {
    const std::string d = upper(dtype);
    if (d.find("BF16") != std::string::npos || d.find("BFLOAT16") != std::string::npos)
        return "bf16";
    if (d.find("64") != std::string::npos || d == "DOUBLE")
        return "fp64";
    if (d.find("16") != std::string::npos || d == "HALF")
        return "fp16";
    if (d.find("8") != std::string::npos)
        return "fp8";
    return "fp32";
}

std::optional<peak> known_peak(const std::string& device, const std::string& device_name,
                               const std::string& dtype, int threads_per_rank) {
    const std::string t = normalise_dtype(dtype);
    if (find_device_kind(device) == device_kind::cpu) {
        if (threads_per_rank <= 0 || (t != "fp32" && t != "fp64"))
            return std::nullopt;
        const double per_core = (t == "fp64" ? 32.0 : 64.0) * 6.0; // FLOP/cycle x GHz
        return peak{
            per_core * threads_per_rank,
            fmt::format("CPU ceiling {:g} GFLOP/s/core x {} threads", per_core, threads_per_rank)};
    }
    const std::string name = upper(device_name);
    for (const gpu_peak& g : gpu_table) {
        if (name.find(g.name) == std::string::npos)
            continue;
        const double tf = t == "fp64"   ? g.fp64
                          : t == "fp16" ? g.fp16
                          : t == "bf16" ? g.bf16
                          : t == "fp8"  ? g.fp8
                                        : g.fp32;
        if (tf <= 0)
            return std::nullopt;
        return peak{tf * 1000.0, fmt::format("{} {} peak {:g} TFLOP/s", g.name, t, tf)};
    }
    return std::nullopt;
}

std::optional<peak> case_peak(const case_data& c, const sanity_limits& limits) {
    if (limits.peak_gflops)
        return peak{*limits.peak_gflops, fmt::format("--peak-gflops {:g}", *limits.peak_gflops)};
    auto meta = [&](const char* k) {
        auto it = c.file->meta.find(k);
        return it == c.file->meta.end() ? attr_value{} : it->second;
    };
    const std::string device = c.text(schema::attr::device, meta(schema::attr::device).text);
    const int threads = static_cast<int>(meta(schema::attr::threads_per_rank).number.value_or(0));
    return known_peak(device, meta(schema::meta_attr::device_name).text,
                      c.text(schema::attr::dtype, "fp32"), threads);
}

link_ceiling known_link(const std::string& device, const std::string& device_name) {
    if (find_device_kind(device) == device_kind::cpu)
        return {cpu_link_gbs, fmt::format("CPU ceiling {:g} GB/s (memory copy bandwidth; "
                                          "--link-gbs states yours)",
                                          cpu_link_gbs)};
    const std::string name = upper(device_name);
    for (const gpu_link& g : link_table)
        if (name.find(g.name) != std::string::npos)
            return {g.gbs, fmt::format("{} links {:g} GB/s (both directions)", g.name, g.gbs)};
    return {unknown_gpu_gbs,
            fmt::format("GPU ceiling {:g} GB/s (device not in the table)", unknown_gpu_gbs)};
}

link_ceiling case_link(const case_data& c, const sanity_limits& limits) {
    if (limits.link_gbs)
        return {*limits.link_gbs, fmt::format("--link-gbs {:g}", *limits.link_gbs)};
    auto meta = [&](const char* k) {
        auto it = c.file->meta.find(k);
        return it == c.file->meta.end() ? std::string() : it->second.text;
    };
    return known_link(c.text(schema::attr::device, meta(schema::attr::device)),
                      meta(schema::meta_attr::device_name));
}

std::string noop_reason(const std::string& job, int world_size) {
    if (job == "collectives" && world_size <= 1)
        return "no-op at P=1 (a collective on one rank moves no data): not rated";
    return "";
}

} // namespace ringscale::analysis
