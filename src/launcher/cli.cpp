#include "src/launcher/cli.hpp"

#include "jobs/registry.hpp"
#include "kernels/cuda/attention_path.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_file.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

namespace po = boost::program_options;

namespace ringscale {

const char* tool_version();

namespace {

/// More threads than this per rank is a typo, not a machine (the largest CPUs have 384 cores).
constexpr int max_threads_per_rank = 1024;

// Launcher options every job shares. Values are text; parse.hpp turns them into numbers.
void add_common(po::options_description& d) {
    d.add_options()("job", po::value<std::string>()->default_value("collectives"),
                    "job to run (a comma list runs several); see --list-jobs")(
        "output,o", po::value<std::string>()->default_value("results/"),
        "results: a directory (a new file per launch is made in it) or a path ending in .h5")(
        "warmup,w", po::value<std::string>()->default_value("5"),
        "untimed warm-up iterations per case (kept in the file, flagged)")(
        "iters,n", po::value<std::string>()->default_value("20"), "timed iterations per case")(
        "repeat", po::value<std::string>()->default_value("1"),
        "run the planned cases N times, interleaved (cases 1..K, then 1..K again, so drift "
        "hits every case alike); each repetition is its own replicate in the file (case "
        "attribute repeat = 0..N-1) and ringscale-stats treats it like a separate launch")(
        "device", po::value<std::string>()->default_value("cpu"), "where jobs compute: cpu|cuda")(
        "comm", po::value<std::string>()->default_value("mpi"), "communicator backend: mpi|nccl")(
        "attn-kernel", po::value<std::string>()->default_value("auto"),
        "CUDA attention kernels: auto (sm90 on a compute capability 9.0 GPU when built with "
        "the 90a target, else sm80) | sm80 (mma.sync) | sm90 (wgmma + TMA); needs --device "
        "cuda unless auto")(
        "validate", po::value<std::string>()->default_value("auto"),
        "check results against the single-rank reference: auto (small cases)|on|off")(
        "threads", po::value<std::string>()->default_value("0"),
        "CPU threads per rank; 0 = cores per node / ranks per node")(
        "seed", po::value<std::string>()->default_value("1"), "seed of the synthetic inputs")(
        "timeout", po::value<std::string>()->default_value("600"),
        "watchdog, seconds: a rank blocked longer than this in one communication (a peer died "
        "or hangs) aborts the job, naming the rank and the operation")(
        "resume", po::value<std::string>()->implicit_value("1")->default_value("0"),
        "skip the cases already completed (status ok, same configuration and world size) by "
        "earlier launches into the --output directory");
}

void add_meta(po::options_description& d) {
    d.add_options()("help,h", "show this help and exit")("version", "print the version and exit")(
        "list-jobs", "list the jobs and exit")(
        "dry-run", "print the planned cases (after all checks) and exit without running");
}

// Each job's own options; an option shared by several jobs is registered once.
std::vector<po::options_description> job_descriptions(std::set<std::string>& seen) {
    std::vector<po::options_description> groups;
    for (const auto& j : jobs::all_jobs()) {
        po::options_description g(fmt::format("Options of job '{}'", j->name()));
        for (const auto& opt : j->options()) {
            if (!seen.insert(opt.name).second)
                continue;
            std::string spec = opt.name;
            if (opt.short_name)
                spec += std::string(",") + opt.short_name;
            auto* value = po::value<std::string>();
            if (!opt.default_value.empty())
                value->default_value(opt.default_value);
            if (opt.is_flag)
                value->implicit_value("1");
            g.add_options()(spec.c_str(), value, opt.help.c_str());
        }
        groups.push_back(g);
    }
    return groups;
}

std::string help_text(const po::options_description& visible) {
    std::ostringstream out;
    out << "ringscale " << tool_version()
        << ": distributed scaling benchmark for long-context attention and training\n\n"
           "usage: mpirun -np P ringscale [JOB_FILE.ini] [options]\n"
           "       srun --mpi=pmix ringscale [JOB_FILE.ini] [options]\n\n"
           "A comma list in any job option (e.g. --op allreduce,sendrecv) makes a sweep: one\n"
           "case per combination. Sizes take K, M, G suffixes (powers of 1024). Options on the\n"
           "command line override the job file. Rank 0 prints a table and, last on stdout,\n"
           "'results: <file>'. Exit codes: 0 ok, 1 a case failed, 2 bad input, 3 runtime error,\n"
           "4 stopped by SIGTERM/SIGINT, 5 watchdog timeout (the file is kept, complete=0).\n\n"
        << visible;
    return out.str();
}

std::string list_jobs_text() {
    std::string text;
    for (const auto& j : jobs::all_jobs())
        text += fmt::format("{:<18} {}\n", j->name(), j->summary());
    return text;
}

/// A job-file line "= value" (no option name), which Boost reports without naming the line.
void check_job_file_lines(const std::string& path, const std::string& text) {
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
        const auto first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] == '=')
            throw config_error(fmt::format("job file '{}' line {}: '{}' has no option name", path,
                                           n, line.substr(first)));
    }
}

void store_job_file(const std::string& path, const po::options_description& d,
                    po::variables_map& vm) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw config_error(fmt::format(
            "job file '{}' is a directory: give an .ini file (e.g. jobs/presets/quick.ini)", path));
    // A regular file of at most 1 MiB: no FIFO, device or /proc file (src/base/text_file.hpp).
    const std::string text = read_text_file(path, max_job_file_bytes, "job file");
    check_job_file_lines(path, text);
    std::istringstream in(text);
    try {
        po::store(po::parse_config_file(in, d, false), vm);
    } catch (const po::error& e) {
        throw config_error(fmt::format("job file '{}': {}", path, e.what()));
    }
}

/// `items` without repeats (first occurrence kept): running a case twice would count as two
/// launches in the analysis. Each removal is named in `notes`.
std::vector<std::string> unique_items(const std::vector<std::string>& items,
                                      const std::string& option, std::vector<std::string>& notes) {
    std::vector<std::string> out;
    for (const auto& item : items) {
        if (std::find(out.begin(), out.end(), item) == out.end())
            out.push_back(item);
        else
            notes.push_back(
                fmt::format("--{}: '{}' is listed more than once; it runs once", option, item));
    }
    return out;
}

int to_int(const po::variables_map& vm, const char* name, int min_value) {
    const auto v = parse_int(vm[name].as<std::string>(), name);
    if (v < min_value || v > 1000000000)
        throw config_error(
            fmt::format("--{}: {} is out of range (at least {})", name, v, min_value));
    return static_cast<int>(v);
}

} // namespace

cli_result parse_cli(int argc, const char* const* argv) {
    po::options_description common("Common options"), meta("Other"), hidden;
    add_common(common);
    add_meta(meta);
    hidden.add_options()("job-file", po::value<std::string>(), "job file");
    std::set<std::string> job_option_names;
    auto job_groups = job_descriptions(job_option_names);

    po::options_description visible, everything, from_file;
    visible.add(common);
    for (auto& g : job_groups)
        visible.add(g);
    visible.add(meta);
    everything.add(visible).add(hidden);
    from_file.add(common);
    for (auto& g : job_groups)
        from_file.add(g);
    po::positional_options_description positional;
    positional.add("job-file", 1);

    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv)
                      .options(everything)
                      .positional(positional)
                      .style(po::command_line_style::default_style &
                             ~po::command_line_style::allow_guessing)
                      .run(),
                  vm);
    } catch (const po::error& e) {
        throw config_error(e.what());
    }
    cli_result result;
    if (vm.count("help")) {
        result.message = help_text(visible);
        return result;
    }
    if (vm.count("version")) {
        result.message = fmt::format("ringscale {}\n", tool_version());
        return result;
    }
    if (vm.count("list-jobs")) {
        result.message = list_jobs_text();
        return result;
    }
    launch_config cfg;
    if (vm.count("job-file")) {
        cfg.job_file = vm["job-file"].as<std::string>();
        store_job_file(cfg.job_file, from_file, vm); // the command line, stored first, wins
    }
    po::notify(vm);

    cfg.jobs = unique_items(split_list(vm["job"].as<std::string>(), "job"), "job", cfg.notes);
    std::set<std::string> applicable;
    for (const auto& name : cfg.jobs)
        for (const auto& opt : jobs::find_job(name).options())
            applicable.insert(opt.name);
    for (const auto& [name, value] : vm) {
        if (value.defaulted() || name == "job-file")
            continue;
        cfg.given.push_back(name);
        if (job_option_names.count(name) && !applicable.count(name))
            throw config_error(
                fmt::format("--{} does not apply to job '{}'", name, fmt::join(cfg.jobs, ",")));
    }
    if (std::count(cfg.given.begin(), cfg.given.end(), "seq-len-per-rank") &&
        std::count(cfg.given.begin(), cfg.given.end(), "seq-len"))
        throw config_error("--seq-len and --seq-len-per-rank exclude each other: give the "
                           "global length (strong scaling) or the length per rank (weak)");
    for (const auto& name : applicable)
        if (vm.count(name))
            cfg.params[name] =
                unique_items(split_list(vm[name].as<std::string>(), name), name, cfg.notes);

    cfg.output = vm["output"].as<std::string>();
    if (cfg.output.empty())
        throw config_error("--output: empty path");
    cfg.warmup = to_int(vm, "warmup", 0);
    cfg.iters = to_int(vm, "iters", 1);
    cfg.repeat = to_int(vm, "repeat", 1);
    cfg.threads = to_int(vm, "threads", 0);
    if (cfg.threads > max_threads_per_rank)
        throw config_error(fmt::format("--threads: {} is above {} threads per rank", cfg.threads,
                                       max_threads_per_rank));
    cfg.seed = parse_size(vm["seed"].as<std::string>(), "seed");
    cfg.device = vm["device"].as<std::string>();
    if (cfg.device != "cpu" && cfg.device != "cuda")
        throw config_error(fmt::format("--device: '{}' is not cpu or cuda", cfg.device));
    cfg.comm = vm["comm"].as<std::string>();
    if (cfg.comm != "mpi" && cfg.comm != "nccl")
        throw config_error(fmt::format("--comm: '{}' is not mpi or nccl", cfg.comm));
    cfg.attn_kernel = vm["attn-kernel"].as<std::string>();
    kernels::cuda::parse_attn_path(cfg.attn_kernel); // refuses other names
    if (cfg.device != "cuda" && cfg.attn_kernel != "auto")
        throw config_error(fmt::format("--attn-kernel {} picks CUDA attention kernels: it needs "
                                       "--device cuda",
                                       cfg.attn_kernel));
    const std::string v = vm["validate"].as<std::string>();
    if (v == "auto")
        cfg.validate = validate_mode::automatic;
    else
        cfg.validate = parse_bool(v, "validate") ? validate_mode::on : validate_mode::off;
    cfg.dry_run = vm.count("dry-run") > 0;
    cfg.timeout_s = parse_double(vm["timeout"].as<std::string>(), "timeout");
    if (!(cfg.timeout_s >= 1)) // the watchdog's resolution; below it every wait would expire
        throw config_error(
            fmt::format("--timeout: {} is below 1 second", vm["timeout"].as<std::string>()));
    cfg.resume = parse_bool(vm["resume"].as<std::string>(), "resume");
    if (cfg.resume && std::filesystem::path(cfg.output).extension() == ".h5")
        throw config_error("--resume needs --output to be a directory, not a .h5 file");
    for (int i = 0; i < argc; ++i)
        cfg.cmdline.emplace_back(argv[i]);

    // The resolved configuration, as a job file that reproduces this launch.
    std::string text;
    for (const auto& [name, value] : vm)
        if (name != "job-file" && name != "dry-run" && !value.empty() &&
            (!job_option_names.count(name) || applicable.count(name)))
            text += fmt::format("{} = {}\n", name, value.as<std::string>());
    cfg.resolved_text = text;
    result.config = std::move(cfg);
    return result;
}

} // namespace ringscale
