#include "hardware.hpp"

#include "src/base/backend.hpp"
#include "src/base/checked_count.hpp"
#include "src/base/dtype_names.hpp"
#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace ringscale::analysis::predict {

namespace {

/// The numeric figures: key, member, unit comment, and the largest value a profile may state
/// (declared ranges: a figure beyond them is a typo or hostile, and would turn into 0, inf or
/// NaN in the prices).
struct numeric_key {
    const char* key;
    double hardware_profile::*member;
    const char* comment;
    double max = 1e6;
};

const numeric_key numeric_keys[] = {
    {"peak_tflops", &hardware_profile::peak_tflops, "dense peak for dtype, TFLOP/s per device"},
    {"efficiency", &hardware_profile::efficiency,
     "share of peak that large attention and GEMM blocks reach (0..1]", 1},
    {"memory_gbs", &hardware_profile::memory_gbs, "device memory bandwidth, GB/s"},
    {"call_overhead_us", &hardware_profile::call_overhead_us, "per kernel call, us"},
    {"device_memory_gib", &hardware_profile::device_memory_gib, "memory per device, GiB"},
    {"ranks_per_node", &hardware_profile::ranks_per_node, "devices (ranks) per node",
     static_cast<double>(max_ranks)},
    {"intra_alpha_us", &hardware_profile::intra_alpha_us, "inside a node: latency per step, us"},
    {"intra_busbw_gbs", &hardware_profile::intra_busbw_gbs,
     "inside a node: bus bandwidth (nccl-tests), GB/s"},
    {"inter_alpha_us", &hardware_profile::inter_alpha_us, "between nodes: latency per step, us"},
    {"inter_busbw_gbs", &hardware_profile::inter_busbw_gbs,
     "between nodes: bus bandwidth per rank (nccl-tests), GB/s"}};

/// The fewest NICs a node may state: a hundredth of one (fewer would price a link as
/// infinitely shared).
constexpr double min_nics_per_node = 0.01;

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

double positive_number(const std::string& value, const std::string& key, const std::string& source,
                       double lo, double hi) {
    std::size_t used = 0;
    double v = std::nan("");
    try {
        v = std::stod(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != value.size() || !std::isfinite(v) || !(v > 0))
        throw config_error(fmt::format("hardware profile {}: {} = '{}' is not a positive number",
                                       source, key, value.substr(0, 40)));
    if (v < lo || v > hi)
        throw config_error(fmt::format("hardware profile {}: {} = '{}' is out of range ({:.10g} "
                                       "to {:.10g})",
                                       source, key, value.substr(0, 40), lo, hi));
    return v;
}

} // namespace

hardware_profile builtin_h100() {
    hardware_profile h;
    h.name = "H100 SXM 80GB, NVLink 4 (8 per node), 400 Gb/s InfiniBand NDR per GPU";
    h.source = "built-in";
    h.device = "cuda";
    h.dtype = "bf16";
    h.peak_tflops = 989;      // H100 SXM datasheet: BF16 dense (1979 with sparsity)
    h.efficiency = 0.5;       // attention forward+backward reach about half of peak
    h.memory_gbs = 3350;      // HBM3
    h.call_overhead_us = 5;   // kernel launch and tail
    h.device_memory_gib = 80; // HBM3 capacity
    h.ranks_per_node = 8;     // HGX H100
    h.nics_per_node = 8;      // one ConnectX-7 per GPU: no rank shares another's link
    h.intra_alpha_us = 3;     // NVLink/NVSwitch, per ring step
    h.intra_busbw_gbs = 360;  // 450 GB/s per direction (NVLink 4: 900 GB/s both ways) x 0.8
    h.inter_alpha_us = 8;     // InfiniBand, per ring step
    h.inter_busbw_gbs = 45;   // 400 Gb/s = 50 GB/s per GPU's NIC x 0.9
    return h;
}

hardware_profile parse_hardware(const std::string& text, const std::string& source) {
    hardware_profile h;
    h.source = source;
    std::map<std::string, std::string> values;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        line = trim(line.substr(0, line.find('#')));
        if (line.empty())
            continue;
        const auto eq = line.find('=');
        if (eq == std::string::npos)
            throw config_error(fmt::format("hardware profile {}: '{}' is not key = value", source,
                                           line.substr(0, 60)));
        values[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    const auto nics = values.find("nics_per_node"); // optional; checked first when given
    if (nics != values.end())
        h.nics_per_node = positive_number(nics->second, "nics_per_node", source, min_nics_per_node,
                                          static_cast<double>(max_ranks));
    std::set<std::string> known = {"name", "device", "dtype", "nics_per_node"};
    for (const numeric_key& k : numeric_keys) {
        known.insert(k.key);
        const auto it = values.find(k.key);
        if (it == values.end() || it->second.empty())
            throw config_error(fmt::format("hardware profile {}: missing figure '{}' ({})", source,
                                           k.key, k.comment));
        h.*(k.member) = positive_number(it->second, k.key, source, 0, k.max);
    }
    for (const auto& [k, v] : values)
        if (!known.count(k))
            throw config_error(
                fmt::format("hardware profile {}: unknown key '{}'", source, k.substr(0, 40)));
    if (h.ranks_per_node != std::floor(h.ranks_per_node))
        throw config_error(fmt::format("hardware profile {}: ranks_per_node = {} is not whole",
                                       source, h.ranks_per_node));
    if (nics == values.end())
        h.nics_per_node = h.ranks_per_node; // one per rank: nothing shared
    // The name and the path reach a terminal and report.md: one line of plain text.
    h.source = terminal_text(source);
    h.name = terminal_text(values.count("name") ? values["name"] : source).substr(0, 160);
    h.device = values.count("device") ? values["device"] : "cuda";
    h.dtype = values.count("dtype") ? values["dtype"] : "bf16";
    if (!dtypes::find(h.dtype))
        throw config_error(fmt::format("hardware profile {}: dtype = '{}' is not one of {}", source,
                                       terminal_text(h.dtype.substr(0, 40)),
                                       fmt::join(dtypes::spellings(), ", ")));
    if (!find_device_kind(h.device))
        throw config_error(fmt::format("hardware profile {}: device = '{}' is not cpu or cuda",
                                       source, h.device.substr(0, 40)));
    return h;
}

hardware_profile load_hardware(const std::string& name_or_path) {
    if (name_or_path == "h100")
        return builtin_h100();
    std::ifstream f(name_or_path);
    if (!f)
        throw config_error(fmt::format("--hardware: cannot read '{}' (a profile file, or h100 for "
                                       "the built-in one)",
                                       name_or_path));
    std::stringstream s;
    s << f.rdbuf();
    return parse_hardware(s.str(), name_or_path);
}

std::string profile_text(const hardware_profile& h) {
    std::string s = fmt::format("# ringscale hardware profile\nname = {}\ndevice = {}\n"
                                "dtype = {}\n",
                                h.name, h.device, h.dtype);
    for (const numeric_key& k : numeric_keys)
        s += fmt::format("{} = {:g}  # {}\n", k.key, h.*(k.member), k.comment);
    s += fmt::format("nics_per_node = {:g}  # links from a node to the others, shared by its "
                     "ranks (optional: ranks_per_node)\n",
                     h.nics_per_node);
    return s;
}

figures profile_figures(const hardware_profile& h) {
    figures f;
    const double rate = h.peak_tflops * 1e12 * h.efficiency;
    f.compute.s_per_attn_flop = 1 / rate;
    f.compute.s_per_gemm_flop = 1 / rate;
    f.compute.s_per_mem_byte = 1 / (h.memory_gbs * 1e9);
    f.compute.s_per_call = h.call_overhead_us * 1e-6;
    f.links[0] = {h.intra_alpha_us * 1e-6, h.intra_busbw_gbs * 1e9};
    f.links[1] = {h.inter_alpha_us * 1e-6, h.inter_busbw_gbs * 1e9};
    f.gpu = find_device_kind(h.device) == device_kind::cuda;
    f.node_cores = 1;
    f.node_links = h.nics_per_node;
    return f;
}

std::string describe(const hardware_profile& h) {
    return fmt::format(
        "assumed hardware ({}): {}; {} {:g} TFLOP/s peak x {:g}, {:g} GB/s memory, "
        "{:g} GiB, {:g} us per call; {:g} ranks and {:g} NICs per node; intra {:g} us + "
        "{:g} GB/s, inter {:g} us + {:g} GB/s (busbw)",
        h.source, h.name, h.dtype, h.peak_tflops, h.efficiency, h.memory_gbs, h.device_memory_gib,
        h.call_overhead_us, h.ranks_per_node, h.nics_per_node, h.intra_alpha_us, h.intra_busbw_gbs,
        h.inter_alpha_us, h.inter_busbw_gbs);
}

} // namespace ringscale::analysis::predict
