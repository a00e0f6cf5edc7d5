#include "recorded_history.hpp"

#include "analysis/reading/reader.hpp"
#include "analysis/statistics/descriptive.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <istream>
#include <map>
#include <ostream>
#include <sstream>

namespace ringscale::test_fixture {

namespace {

using analysis::case_data;

/// The /meta values a recording keeps: the environment's and what moved_with() names.
const char* const kept_meta[] = {"mpi_transport", "mpi_library", "mpi_library_version",
                                 "nccl_version",  "blas_core",   "compiler_version",
                                 "numhosts",      "device_name"};

const char* const header = "launch\tcreated_utc\tlabels\tmeta\tjob\tvariant\tworld_size\t"
                           "identity\tstep_s\tcompute_s\tcomm_s\tmachine";

/// Median over measured rows of the slowest rank (time_s) or the mean rank (a phase).
double median_of(const case_data& c, const std::vector<double>& v, bool slowest) {
    std::vector<double> rows;
    for (const std::size_t r : c.measured_rows()) {
        double x = 0, sum = 0;
        for (std::size_t k = 0; k < c.world; ++k) {
            x = std::max(x, v[r * c.world + k]);
            sum += v[r * c.world + k];
        }
        rows.push_back(slowest ? x : sum / static_cast<double>(c.world));
    }
    return rows.empty() ? std::nan("") : analysis::median(rows);
}

/// "k=v k=v" of /meta label.* values, and "k=v|k=v" of the kept /meta values.
std::pair<std::string, std::string> meta_text(const case_data& c) {
    std::vector<std::string> labels, meta;
    for (const auto& [k, v] : c.file->meta) {
        if (k.rfind("label.", 0) == 0)
            labels.push_back(k.substr(6) + "=" + v.text);
        else if (std::find(std::begin(kept_meta), std::end(kept_meta), k) != std::end(kept_meta))
            meta.push_back(k + "=" + v.text);
    }
    return {fmt::format("{}", fmt::join(labels, " ")), fmt::format("{}", fmt::join(meta, "|"))};
}

std::string case_line(std::size_t launch, const case_data& c) {
    const auto [labels, meta] = meta_text(c);
    std::vector<std::string> identity, machine;
    for (const auto& [k, v] : c.identity)
        if (k != "job" && k != "variant" && k != "world_size")
            identity.push_back(k + "=" + v.text);
    for (const auto& [k, v] : c.machine)
        machine.push_back(fmt::format("{}={:.6g}", k, fmt::join(v, ":")));
    return fmt::format(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.6e}\t{:.6e}\t{:.6e}\t{}", launch, c.file->created_utc,
        labels, meta, c.job, c.variant, c.world_size, fmt::join(identity, " "),
        median_of(c, c.time_s, true), c.compute_s.empty() ? 0 : median_of(c, c.compute_s, false),
        c.comm_wait_s.empty() ? 0 : median_of(c, c.comm_wait_s, false), fmt::join(machine, " "));
}

std::vector<std::string> split(const std::string& s, char by) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, by))
        out.push_back(part);
    if (!s.empty() && s.back() == by)
        out.emplace_back();
    return out;
}

/// "k=v" into its key and value.
std::pair<std::string, std::string> pair_of(const std::string& kv, int line) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
        throw config_error(fmt::format("recording line {}: '{}' is not key=value", line, kv));
    return {kv.substr(0, eq), kv.substr(eq + 1)};
}

/// The case of one recorded line (fields as in `header`).
fixture_case case_of(const std::vector<std::string>& f, int line) {
    fixture_case c;
    c.job = f[4];
    c.variant = f[5];
    c.world_size = static_cast<int>(parse_int(f[6], "world_size"));
    c.text_params.clear();
    c.int_params.clear();
    for (const std::string& kv : split(f[7], ' ')) {
        const auto [k, v] = pair_of(kv, line);
        if (k == "scaling")
            c.scaling = v;
        else if (!v.empty() && v.find_first_not_of("-0123456789") == std::string::npos)
            c.int_params.emplace_back(k, parse_int(v, k));
        else
            c.text_params.emplace_back(k, v);
    }
    const double step = parse_double(f[8], "step_s"), comm = parse_double(f[10], "comm_s");
    // The slowest of the ranks is what the history reads: each rank at the median, the
    // iterations 1% apart.
    c.base_time_s = step;
    c.noise = 0.01;
    c.iterations = 20;
    c.comm_fraction = step > 0 ? std::clamp(comm / step, 0.0, 1.0) : 0;
    c.compute_fraction =
        step > 0 ? std::clamp(parse_double(f[9], "compute_s") / step, 0.0, 1 - c.comm_fraction) : 0;
    for (const std::string& kv : split(f[11], ' ')) {
        if (kv.empty())
            continue;
        const auto [k, v] = pair_of(kv, line);
        std::vector<double> values;
        for (const std::string& x : split(v, ':'))
            values.push_back(x == "nan" ? std::nan("") : parse_double(x, k));
        c.machine.emplace_back(k, values);
    }
    c.seed = static_cast<std::uint64_t>(line);
    return c;
}

} // namespace

void record_history(const std::vector<std::string>& inputs, std::ostream& out) {
    std::vector<std::string> problems;
    std::vector<std::vector<case_data>> launches;
    for (const std::string& path : analysis::expand_inputs(inputs, problems))
        launches.push_back(analysis::read_results_file(path));
    if (!problems.empty())
        throw config_error(problems.front());
    std::stable_sort(launches.begin(), launches.end(), [](const auto& a, const auto& b) {
        return !a.empty() && !b.empty() && a[0].file->created_utc < b[0].file->created_utc;
    });
    out << header << "\n";
    for (std::size_t j = 0; j < launches.size(); ++j)
        for (const case_data& c : launches[j])
            if (c.status == "ok")
                out << case_line(j + 1, c) << "\n";
}

std::vector<fixture_file> replay_history(std::istream& in) {
    std::vector<fixture_file> out;
    std::string text;
    bool headed = false; // '#' lines, then the header, then the cases
    for (int line = 1; std::getline(in, text); ++line) {
        if (text.empty() || text[0] == '#')
            continue;
        if (!headed && text != header)
            throw config_error(fmt::format("recording line {}: not a recording's header", line));
        if (!headed) {
            headed = true;
            continue;
        }
        const std::vector<std::string> f = split(text, '\t');
        if (f.size() != 12)
            throw config_error(fmt::format("recording line {}: {} fields, not 12", line, f.size()));
        const auto launch = static_cast<std::size_t>(parse_int(f[0], "launch"));
        if (launch != out.size() && launch != out.size() + 1)
            throw config_error(
                fmt::format("recording line {}: launch {} out of order", line, launch));
        if (launch == out.size() + 1) {
            fixture_file file;
            file.created_utc = f[1];
            file.launch_id = fmt::format("{:032x}", 0x5ec0de00 + launch);
            for (const std::string& kv : split(f[2], ' '))
                if (!kv.empty())
                    file.labels.push_back(pair_of(kv, line));
            for (const std::string& kv : split(f[3], '|'))
                if (!kv.empty()) {
                    const auto [k, v] = pair_of(kv, line);
                    if (k == "device_name")
                        file.device_name = v;
                    else
                        file.text_meta.emplace_back(k, v);
                }
            out.push_back(std::move(file));
        }
        out.back().cases.push_back(case_of(f, line));
    }
    return out;
}

} // namespace ringscale::test_fixture
