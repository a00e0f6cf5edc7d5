// `ringscale-stats history DIR...`: every launch indexed (SQLite, beside the results or at
// --index), series of each case on each environment, their change points and what moved;
// exit 1 with --fail-on regression when a series' newest launch lies after a slowdown.
#include "history_load.hpp"
#include "shared.hpp"

#include "option_ranges.hpp"

#include "analysis/history/tables.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_escape.hpp"
#include "src/base/text_file.hpp"

#include <ctime>
#include <fmt/format.h>
#include <set>
#include <sstream>

namespace ringscale::analysis {

namespace {

/// The commits of a --commits file in order: one per line, blank lines and '#' comments
/// skipped; a line with a control character or over 256 bytes is refused.
std::vector<std::string> read_commits(const std::string& path) {
    std::istringstream in(read_text_file(path, std::uint64_t{16} << 20, "--commits file"));
    std::vector<std::string> out;
    std::set<std::string> seen;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
            line.pop_back();
        line.erase(0, line.find_first_not_of(" \t"));
        if (line.empty() || line[0] == '#')
            continue;
        for (const unsigned char c : line)
            RINGSCALE_REQUIRE(c >= 0x20 && c != 0x7f && line.size() <= 256,
                              fmt::format("--commits file line {}: not a commit name", n));
        RINGSCALE_REQUIRE(
            seen.insert(line).second,
            fmt::format("--commits file line {}: '{}' is listed twice", n, terminal_text(line)));
        out.push_back(line);
    }
    RINGSCALE_REQUIRE(!out.empty(), "--commits file names no commit");
    return out;
}

struct history_command final : subcommand {
    const char* name() const override { return "history"; }
    const char* arguments() const override { return "DIR..."; }
    const char* help() const override {
        return "Index every launch (SQLite, beside the results or at --index), build a series "
               "per case and environment, find its change points (E-divisive means, permutation "
               "test) and the phase that moved; each series' noise and detectable step. Exit 1 "
               "with --fail-on regression when a series' newest launch follows a slowdown.";
    }
    void declare(po::options_description& d) override;
    void finish(const po::variables_map& vm, std::vector<std::string> args) override;
    int run(std::ostream& out) const override;

    std::vector<std::string> m_inputs;
    std::string m_index;
    output_format m_format = output_format::text;
    history::series_options m_opt;
    bool m_fail_on_regression = false;
    bool m_strict = false;
    double m_index_wait_s = default_index_wait_s;
};

void history_command::declare(po::options_description& d) {
    auto& ch = m_opt.change;
    d.add_options()("format",
                    po::value<std::string>()->default_value("text")->notifier(
                        [this](const std::string& f) { m_format = parse_format(f); }),
                    "text | md | csv | json")(
        "index", po::value<std::string>(&m_index),
        "the index file (default: ringscale-history.sqlite in the first DIR)")(
        "order", po::value<std::string>()->default_value("time")->notifier([this](auto o) {
            if (o == "time")
                return;
            RINGSCALE_REQUIRE(o.rfind("label:", 0) == 0 && valid_label_key(o.substr(6)),
                              "--order is time or label:KEY (a --label key)");
            m_opt.order_label = o.substr(6);
        }),
        "order of a series: time (launch date) or label:KEY (the label's values, numbers by "
        "value; --commits gives their order)")("commits", po::value<std::string>(),
                                               "file of the label's values in order, one a line")(
        "env", po::value<std::string>()->notifier([this](const std::string& e) {
            m_opt.env_keys = split_list(e, "env");
            for (const auto& k : m_opt.env_keys)
                RINGSCALE_REQUIRE(valid_label_key(k.rfind("label:", 0) == 0 ? k.substr(6) : k),
                                  "--env: a /meta attribute or label:KEY");
        }),
        "what makes an environment besides nodes x ranks per node (default "
        "device_name,mpi_library,mpi_library_version,nccl_version; label:KEY for a label)")(
        "alpha", po::value<double>(&ch.alpha)->default_value(0.01, "0.01")->notifier([](double a) {
            in_range("alpha", a, probability);
        }),
        "significance of each change point (permutation test)")(
        "min-segment", po::value<std::size_t>(&ch.min_segment)->default_value(3),
        "launches on each side of a change, at least (a lone spike is no change)")(
        "min-effect", po::value<std::string>()->default_value("2%")->notifier([this](auto t) {
            if (!t.empty() && t.back() == '%')
                t.pop_back();
            m_opt.change.min_effect = parse_double(t, "min-effect") / 100;
            RINGSCALE_REQUIRE(m_opt.change.min_effect >= 0 && m_opt.change.min_effect <= 10,
                              "--min-effect is 0% to 1000%");
        }),
        "smallest change of the median that counts, in percent")(
        "permutations", po::value<std::size_t>(&ch.permutations)->default_value(999),
        "permutations per test (99 to 99999)")(
        "seed", po::value<std::uint64_t>(&ch.seed)->default_value(1), "seed of the permutations")(
        "fail-on", po::value<std::string>()->notifier([this](const std::string& f) {
            RINGSCALE_REQUIRE(f == "regression", "--fail-on takes: regression");
            m_fail_on_regression = true;
        }),
        "regression: exit 1 when a series' newest launch lies after a slowdown")(
        "keep-marked", po::bool_switch(&m_opt.keep_marked),
        "keep launches measured on a contended machine or while the drift sentinel drifted in "
        "their series (left out by default), for a machine that is never quiet")(
        "index-wait",
        po::value<double>(&m_index_wait_s)
            ->default_value(default_index_wait_s, "600")
            ->notifier([](double w) {
                RINGSCALE_REQUIRE(w >= 0 && w <= 86400, "--index-wait is 0 to 86400 seconds");
            }),
        "seconds to wait for another run that holds the index's lock")(
        "strict", po::bool_switch(&m_strict),
        "fail (exit 2) on any unreadable file instead of leaving it out with a note");
}

void history_command::finish(const po::variables_map& vm, std::vector<std::string> args) {
    RINGSCALE_REQUIRE(!args.empty(), "history: no input directories given");
    m_inputs = std::move(args);
    RINGSCALE_REQUIRE(m_opt.change.min_segment >= 2 && m_opt.change.min_segment <= 1000,
                      "--min-segment is 2 to 1000 launches");
    RINGSCALE_REQUIRE(m_opt.change.permutations >= 99 && m_opt.change.permutations <= 99999,
                      "--permutations is 99 to 99999");
    if (vm.count("commits")) {
        RINGSCALE_REQUIRE(!m_opt.order_label.empty(), "--commits needs --order label:KEY");
        m_opt.commits = read_commits(vm["commits"].as<std::string>());
    }
    if (m_index.empty())
        m_index = default_history_index(m_inputs, "history", "--index");
    m_opt.now_s = static_cast<std::int64_t>(std::time(nullptr));
}

int history_command::run(std::ostream& out) const {
    const std::unique_ptr<history_data> data =
        read_history(m_inputs, m_index, m_opt, m_strict, m_index_wait_s);
    const history::series_set& set = data->set;
    print_tables(out, m_format,
                 {{"changes", history::change_table(set)}, {"series", history::series_table(set)}});
    std::size_t changes = 0, regressed = 0;
    for (const auto& s : set.all) {
        changes += s.changes.size();
        regressed += s.regressed();
    }
    note(fmt::format("{} series, {} change point(s), {} now slower than before their last change",
                     set.all.size(), changes, regressed));
    return m_fail_on_regression && regressed > 0 ? 1 : 0;
}

} // namespace

RINGSCALE_STATS_FACTORY(history, history_command)

} // namespace ringscale::analysis
