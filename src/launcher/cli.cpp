#include "src/launcher/cli.hpp"

#include "jobs/registry.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_file.hpp"
#include "src/engine/sweep.hpp"
#include "src/launcher/launch_options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace po = boost::program_options;

namespace ringscale {

const char* tool_version();

namespace {

/// Register `decls` (each name once: an option shared by several jobs is declared alike by
/// each) as text values; --help shows each one's help, allowed values or range.
void add_declared(po::options_description& d, const std::vector<jobs::option_decl>& decls,
                  std::set<std::string>& seen) {
    for (const jobs::option_decl& opt : decls) {
        if (!seen.insert(opt.name).second)
            continue;
        std::string spec = opt.name;
        if (opt.short_name)
            spec += std::string(",") + opt.short_name;
        auto* value = po::value<std::string>();
        if (!opt.default_value.empty())
            value->default_value(opt.default_value);
        if (opt.type == jobs::option_type::flag)
            value->implicit_value("1");
        else if (!opt.implicit_value.empty())
            value->implicit_value(opt.implicit_value);
        const std::string values = jobs::describe_values(opt);
        const std::string help = values.empty() ? opt.help_text : opt.help_text + " " + values;
        d.add_options()(spec.c_str(), value, help.c_str());
    }
}

void add_meta(po::options_description& d) {
    d.add_options()("help,h", "show this help and exit")("version", "print the version and exit")(
        "list-jobs", "list the jobs and exit")(
        "dry-run", "print the planned cases (after all checks) and exit without running")(
        "label", po::value<std::vector<std::string>>()->composing(),
        "key=value (repeatable): what you track beside ringscale's own metadata (a stack commit, "
        "an NCCL or driver version), written to /meta as label.KEY; not part of any case's "
        "identity (ringscale-stats history orders and shows launches by it)");
}

/// --label values, each checked, sorted by key; a key given twice is refused.
std::vector<std::pair<std::string, std::string>> read_labels(const po::variables_map& vm) {
    std::map<std::string, std::string> labels;
    if (vm.count("label"))
        for (const std::string& text : vm["label"].as<std::vector<std::string>>()) {
            auto [key, value] = parse_label(text);
            if (!labels.emplace(key, value).second)
                throw config_error(fmt::format("--label: key '{}' is given twice", key));
        }
    return {labels.begin(), labels.end()};
}

// Each job's own options; an option shared by several jobs is registered once.
std::vector<po::options_description> job_descriptions(std::set<std::string>& seen) {
    std::vector<po::options_description> groups;
    for (const auto& j : jobs::all_jobs()) {
        po::options_description g(fmt::format("Options of job '{}'", j->name()));
        add_declared(g, j->options(), seen);
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

/// The job options of `cfg.jobs` from `vm`: only options those jobs declare, each list's
/// values checked against its declaration now, before any other work. Returns the number of
/// points of the jobs' sweeps.
std::uint64_t read_job_options(const po::variables_map& vm,
                               const std::set<std::string>& job_option_names,
                               std::set<std::string>& applicable, launch_config& cfg) {
    cfg.jobs = unique_items(split_list(vm["job"].as<std::string>(), "job"), "job", cfg.notes);
    for (const auto& name : cfg.jobs)
        for (const auto& opt : jobs::find_job(name).options())
            applicable.insert(opt.name);
    for (const auto& [name, value] : vm) {
        if (value.defaulted() || name == "job-file" || name == "label")
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
    std::uint64_t points = 0;
    for (const auto& name : cfg.jobs)
        points += jobs::check_sweep(jobs::find_job(name).options(), cfg.params);
    return points;
}

/// The resolved configuration, as a job file that reproduces this launch.
std::string resolved_text(const po::variables_map& vm,
                          const std::set<std::string>& job_option_names,
                          const std::set<std::string>& applicable) {
    std::string text;
    for (const auto& [name, value] : vm)
        if (name != "job-file" && name != "dry-run" && name != "label" && !value.empty() &&
            (!job_option_names.count(name) || applicable.count(name)))
            text += fmt::format("{} = {}\n", name, value.as<std::string>());
    return text;
}

/// The launch_config of a parsed command line (and job file).
launch_config make_config(const po::variables_map& vm,
                          const std::set<std::string>& job_option_names, int argc,
                          const char* const* argv, std::string job_file) {
    launch_config cfg;
    cfg.job_file = std::move(job_file);
    std::set<std::string> applicable;
    const std::uint64_t points = read_job_options(vm, job_option_names, applicable, cfg);
    std::map<std::string, std::string> texts;
    for (const auto& opt : launch_options())
        if (vm.count(opt.name))
            texts[opt.name] = vm[opt.name].as<std::string>();
    read_launch_options(texts, cfg);
    cfg.dry_run = vm.count("dry-run") > 0;
    cfg.labels = read_labels(vm);
    jobs::check_case_count(points, static_cast<std::uint64_t>(cfg.repeat));
    for (int i = 0; i < argc; ++i)
        cfg.cmdline.emplace_back(argv[i]);
    cfg.resolved_text = resolved_text(vm, job_option_names, applicable);
    return cfg;
}

} // namespace

namespace {

/// The arguments with "--NAME -1" (a long option that takes a value, then a negative number)
/// joined into "--NAME=-1": the parser would read "-1" as an option of its own and answer
/// "unrecognised option '-1'" where the option's own range check has the clear line.
std::vector<std::string> join_negative_values(int argc, const char* const* argv,
                                              const po::options_description& options) {
    std::vector<std::string> out(argv, argv + argc);
    for (std::size_t i = 1; i + 1 < out.size(); ++i) {
        const std::string& a = out[i];
        const std::string& next = out[i + 1];
        if (a == "--")
            break;
        const bool negative = next.size() > 1 && next[0] == '-' &&
                              (std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.');
        if (a.size() <= 2 || a.compare(0, 2, "--") != 0 || a.find('=') != std::string::npos ||
            !negative)
            continue;
        const po::option_description* d = options.find_nothrow(a.substr(2), false);
        if (d && d->semantic()->max_tokens() > 0) {
            out[i] += "=" + next;
            out.erase(out.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
    }
    return out;
}

} // namespace

cli_result parse_cli(int argc, const char* const* argv) {
    po::options_description common("Common options"), meta("Other"), hidden;
    std::set<std::string> common_names, job_option_names;
    add_declared(common, launch_options(), common_names);
    add_meta(meta);
    hidden.add_options()("job-file", po::value<std::string>(), "job file");
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
    const std::vector<std::string> args = join_negative_values(argc, argv, everything);
    try {
        po::store(po::command_line_parser(std::vector<std::string>(args.begin() + 1, args.end()))
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
    if (vm.count("help"))
        result.message = help_text(visible);
    else if (vm.count("version"))
        result.message = fmt::format("ringscale {}\n", tool_version());
    else if (vm.count("list-jobs"))
        result.message = list_jobs_text();
    if (!result.message.empty())
        return result;
    std::string job_file;
    if (vm.count("job-file")) {
        job_file = vm["job-file"].as<std::string>();
        store_job_file(job_file, from_file, vm); // the command line, stored first, wins
    }
    po::notify(vm);
    result.config = make_config(vm, job_option_names, argc, argv, std::move(job_file));
    return result;
}

} // namespace ringscale
