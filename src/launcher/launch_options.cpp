#include "src/launcher/launch_options.hpp"

#include "jobs/attention_fp8.hpp"
#include "kernels/attention_path.hpp"
#include "kernels/blas_core.hpp"
#include "kernels/cudnn_support.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

namespace ringscale {

namespace {

// --trace on --device cuda: the GPU's events are recorded and resolved like the CPU's
// (kernels/event_recorder.hpp), but have not yet been checked on a GPU. Once
// tests/gpu/trace_gpu.sh has passed on one, set this to true and the launcher takes it.
constexpr bool cuda_trace_checked = false;

// Whether --trace may run on cuda: once checked, or inside that check (tests/gpu/trace_gpu.sh
// sets RINGSCALE_GPU_TRACE_CHECK=1).
bool cuda_trace_allowed() {
    const char* check = std::getenv("RINGSCALE_GPU_TRACE_CHECK");
    return cuda_trace_checked || (check != nullptr && std::string(check) == "1");
}

using jobs::option_decl;

/// The typed value of launcher option `name` (declared, and always given or defaulted).
jobs::param_value value_of(const std::map<std::string, std::string>& texts,
                           const std::string& name) {
    const option_decl* d = jobs::find_decl(launch_options(), name);
    if (!d)
        throw std::logic_error("no launcher option --" + name);
    auto it = texts.find(name);
    return jobs::parse_value(*d, it == texts.end() ? d->default_value : it->second);
}

int int_of(const std::map<std::string, std::string>& texts, const std::string& name) {
    // The declared ranges are far inside int.
    return static_cast<int>(std::get<std::int64_t>(value_of(texts, name).value));
}

std::vector<option_decl> declare() {
    using d = option_decl;
    return {
        d::text("job", "collectives")
            .help("job to run (a comma list runs several); see --list-jobs"),
        d::text("output", "results/")
            .short_option('o')
            .help("results: a directory (a new file per launch is made in it) or a path ending "
                  "in .h5"),
        d::integer("warmup", "5", 0, 1e6)
            .short_option('w')
            .help("untimed warm-up iterations per case (kept in the file, flagged)"),
        d::integer("iters", "20", 1, 1e6).short_option('n').help("timed iterations per case"),
        d::integer("repeat", "1", 1, 1000)
            .help("run the planned cases N times, interleaved (cases 1..K, then 1..K again, so "
                  "drift hits every case alike); each repetition is its own replicate in the file "
                  "(case attribute repeat = 0..N-1) and ringscale-stats treats it like a separate "
                  "launch"),
        d::choice("device", "cpu", {"cpu", "cuda"}).help("where jobs compute"),
        d::choice("comm", "mpi", {"mpi", "nccl"}).help("communicator backend"),
        d::choice("attn-kernel", "auto", {"auto", "sm80", "sm90", "cudnn"})
            .help("CUDA attention kernels: auto (sm90 on a compute capability 9.0 GPU when built "
                  "with the 90a target, else sm80) | sm80 (mma.sync) | sm90 (wgmma + TMA) | "
                  "cudnn (cuDNN fused attention, when built with cuDNN; not with --sparsity or "
                  "--dilation); needs --device cuda unless auto"),
        d::flag("validate", "auto")
            .also({"auto"})
            .help("check results against the single-rank reference (auto: small cases)"),
        d::choice("accuracy", "auto", {"auto", "on", "off"})
            .help("attention jobs: measure each case's error against an fp64 reference on "
                  "sampled rows (O, LSE, dQ, dK, dV; acc_* in the results) and show it in the "
                  "table (on); auto measures where that costs at most about 5% of the case"),
        d::integer("accuracy-sample", "64", 1, 65536)
            .help("--accuracy: query rows sampled per head and key rows per kv head (every row "
                  "when the sequence is shorter)"),
        d::integer("threads", "0", 0, 1024)
            .help("CPU threads per rank; 0 = cores per node / ranks per node"),
        d::size("seed", "1", 0, 1ull << 62).help("seed of the synthetic inputs"),
        d::number("timeout", "600", 1, 1e6)
            .help("watchdog, seconds: a rank blocked longer than this in one communication (a "
                  "peer died or hangs) aborts the job, naming the rank and the operation"),
        d::integer("sentinel", "0", -1, 1e6)
            .help("drift sentinel: a short fixed probe (a small GEMM and, at 2+ ranks, a 64 KiB "
                  "allreduce) at launch start, at launch end and every N cases, recorded in the "
                  "file; a launch whose probe drifts beyond its tolerance is marked. 0 = auto "
                  "(between start and end, a probe once the cases since the last took 100x a "
                  "probe: about 1% of the launch); -1 = no sentinel"),
        d::integer("trace", "0", 0, 2)
            .help("record every rank's events (each ring step's compute, sends, receives, waits, "
                  "merges; collectives; training layers) and keep N iterations per case in the "
                  "file: 1 the median, 2 the median and the slowest (0: off); read them with "
                  "ringscale-stats trace and overlap. CPU only until its CUDA events are "
                  "checked on a GPU"),
        d::flag("resume", "0")
            .help("skip the cases already completed (status ok, same configuration and world "
                  "size) by earlier launches into the --output directory")};
}

// --attn-kernel cudnn, before any GPU is bound: a build without cuDNN answers "not
// compiled"; a mask cuDNN cannot take (block-sparse, dilated) is refused, one line each.
void check_cudnn_request(const launch_config& cfg) {
    const kernels::attn_path path = kernels::parse_attn_path(cfg.attn_kernel);
    kernels::check_attention_path_compiled(path, kernels::cudnn_compiled());
    if (path != kernels::attn_path::cudnn)
        return;
    const std::pair<const char*, kernels::attn_mask_kind> masks[] = {
        {"sparsity", kernels::attn_mask_kind::block_sparse},
        {"dilation", kernels::attn_mask_kind::dilated}};
    for (const auto& [name, kind] : masks) {
        const auto it = cfg.params.find(name);
        if (it == cfg.params.end())
            continue;
        for (const std::string& value : it->second)
            if (!value.empty()) {
                kernels::attn_case_traits c;
                c.mask = kind;
                throw config_error(fmt::format("--attn-kernel cudnn with --{} {}: {}", name, value,
                                               kernels::cudnn_unsupported_reason(c)));
            }
    }
}

// --dtype fp8 for an attention job, before any GPU is bound: cuDNN's fp8 attention needs
// --device cuda and --attn-kernel cudnn (one line); the rest is checked per case.
void check_fp8_request(const launch_config& cfg) {
    const bool attention = std::any_of(cfg.jobs.begin(), cfg.jobs.end(), [](const auto& j) {
        return j == "ring_attention" || j == "context_parallel";
    });
    const auto it = cfg.params.find("dtype");
    if (!attention || it == cfg.params.end())
        return;
    for (const std::string& value : it->second)
        if (value == "fp8" || value == "fp8_e4m3" || value == "float8_e4m3") {
            jobs::fp8_attention_request r;
            r.device = cfg.device;
            r.kernel = kernels::parse_attn_path(cfg.attn_kernel);
            if (const std::string why = jobs::fp8_attention_problem(r); !why.empty())
                throw config_error(why);
        }
}

} // namespace

const std::vector<option_decl>& launch_options() {
    static const std::vector<option_decl> decls = declare();
    return decls;
}

void read_launch_options(const std::map<std::string, std::string>& texts, launch_config& cfg) {
    cfg.output = value_of(texts, "output").text;
    if (cfg.output.empty())
        throw config_error("--output: empty path");
    cfg.warmup = int_of(texts, "warmup");
    cfg.iters = int_of(texts, "iters");
    cfg.repeat = int_of(texts, "repeat");
    cfg.threads = int_of(texts, "threads");
    cfg.seed = std::get<std::uint64_t>(value_of(texts, "seed").value);
    cfg.device = parse_device_kind(value_of(texts, "device").text);
    cfg.comm = parse_comm_kind(value_of(texts, "comm").text);
    cfg.attn_kernel = value_of(texts, "attn-kernel").text;
    if (cfg.device != device_kind::cuda && cfg.attn_kernel != "auto")
        throw config_error(fmt::format("--attn-kernel {} picks CUDA attention kernels: it needs "
                                       "--device cuda",
                                       cfg.attn_kernel));
    check_cudnn_request(cfg);
    check_fp8_request(cfg);
    const jobs::param_value v = value_of(texts, "validate");
    if (const bool* on = std::get_if<bool>(&v.value))
        cfg.validate = *on ? validate_mode::on : validate_mode::off;
    else
        cfg.validate = validate_mode::automatic;
    const std::string accuracy = value_of(texts, "accuracy").text;
    cfg.accuracy = accuracy == "on"    ? accuracy_mode::on
                   : accuracy == "off" ? accuracy_mode::off
                                       : accuracy_mode::automatic;
    cfg.accuracy_sample = int_of(texts, "accuracy-sample");
    cfg.timeout_s = std::get<double>(value_of(texts, "timeout").value);
    cfg.resume = std::get<bool>(value_of(texts, "resume").value);
    cfg.sentinel_every = int_of(texts, "sentinel");
    cfg.trace = int_of(texts, "trace");
    if (cfg.trace > 0 && cfg.device == device_kind::cuda && !cuda_trace_allowed())
        throw config_error("--trace needs --device cpu: its CUDA events are recorded, but "
                           "their check on a GPU is still pending");
    if (cfg.resume && std::filesystem::path(cfg.output).extension() == ".h5")
        throw config_error("--resume needs --output to be a directory, not a .h5 file");
    // RINGSCALE_LINEAR_GEMM read (and a bad value refused) with the options, where an error is
    // one line, not one per rank later.
    (void)kernels::linear_gemm();
}

} // namespace ringscale
