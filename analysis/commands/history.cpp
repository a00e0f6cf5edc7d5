// `ringscale-stats history DIR...`: every launch indexed (SQLite, beside the results or at
// --index), series of each case on each environment, their change points and what moved with
// each; with --fail-on regression, exit 1 on a regression, 6 when not decided.
#include "history_load.hpp"
#include "history_options.hpp"
#include "shared.hpp"

#include "option_ranges.hpp"

#include "analysis/history/tables.hpp"
#include "analysis/history/verdict.hpp"

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

struct history_command final : subcommand {
    const char* name() const override { return "history"; }
    const char* arguments() const override { return "DIR..."; }
    const char* help() const override {
        return "Index every launch (SQLite, beside the results or at --index), build a series "
               "per case and environment, find its change points (binary segmentation on capped "
               "absolute "
               "deviations of the log launch medians, permutation test; a short segment by "
               "its small-sample test) and what moved with each; each series' noise and "
               "detectable step. --alpha holds for the whole run: each of K series judged is "
               "tested at alpha / K, so a night of many steady series raises a false change "
               "with a chance of at most alpha. With --fail-on regression: exit 1 on a "
               "regression, 6 when not decided (too few launches for --alpha or for the noise "
               "among them). Each file is read within 10 s of CPU time plus 2 s per MiB "
               "(RINGSCALE_READ_LIMIT_S sets the 10 s, 0.001-86400; both scale with it); a read "
               "past it is named and tried again on the next run.";
    }
    void declare(po::options_description& d) override;
    void finish(const po::variables_map& vm, std::vector<std::string> args) override;
    int run(std::ostream& out) const override;

    std::vector<std::string> m_inputs;
    std::string m_index;
    output_format m_format = output_format::text;
    history::series_options m_opt;
    bool m_fail_on_regression = false;
    bool m_verbose = false;
    bool m_strict = false;
    double m_index_wait_s = default_index_wait_s;
};

void history_command::declare(po::options_description& d) {
    d.add_options()("format",
                    po::value<std::string>()->default_value("text")->notifier(
                        [this](const std::string& f) { m_format = parse_format(f); }),
                    "text | md | csv | json")(
        "index", po::value<std::string>(&m_index),
        "the index file (default: ringscale-history.sqlite in the first DIR)");
    declare_series_options(d, m_opt, "");
    d.add_options()("fail-on", po::value<std::string>()->notifier([this](const std::string& f) {
        RINGSCALE_REQUIRE(f == "regression", "--fail-on takes: regression");
        m_fail_on_regression = true;
    }),
                    "regression: exit 1 on a regression, 6 when not decided, 0 when judged "
                    "with no regression (DESIGN.md, \"Exit codes\")")(
        "index-wait",
        po::value<double>(&m_index_wait_s)
            ->default_value(default_index_wait_s, "600")
            ->notifier([](double w) {
                RINGSCALE_REQUIRE(w >= 0 && w <= 86400, "--index-wait is 0 to 86400 seconds");
            }),
        "seconds to wait for another run that holds the index's lock")(
        "strict", po::bool_switch(&m_strict),
        "fail (exit 2) on any unreadable file instead of leaving it out with a note")(
        "verbose", po::bool_switch(&m_verbose),
        "name every file left out (by default one line per kind of problem, with a count)");
}

void history_command::finish(const po::variables_map& vm, std::vector<std::string> args) {
    RINGSCALE_REQUIRE(!args.empty(), "history: no input directories given");
    m_inputs = std::move(args);
    finish_series_options(vm, m_opt, "");
    if (m_index.empty())
        m_index = default_history_index(m_inputs, "history", "--index");
}

int history_command::run(std::ostream& out) const {
    const std::unique_ptr<history_data> data =
        read_history(m_inputs, m_index, m_opt, m_strict, m_index_wait_s, m_verbose);
    const history::series_set& set = data->set;
    print_tables(out, m_format,
                 {{"changes", history::change_table(set)}, {"series", history::series_table(set)}});
    // The tables out before the verdict's lines on stderr: one log of both never splices a
    // line of one into a row of the other.
    out.flush();
    const history::verdict v = history::judge(set, m_opt);
    for (const std::string& line : v.lines)
        note(line);
    note(v.summary);
    if (!m_fail_on_regression)
        return 0;
    return v.code;
}

} // namespace

RINGSCALE_STATS_FACTORY(history, history_command)

} // namespace ringscale::analysis
