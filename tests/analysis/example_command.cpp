// `ringscale-stats launches INPUT... [--job NAME]`: the cases and launches of each job.
#include "analysis/commands/shared.hpp"

#include <map>

namespace ringscale::analysis {

namespace {

// input_command (shared.hpp): the INPUT... arguments and m_common, the options every
// subcommand has.
struct launches_command final : input_command {
    const char* name() const override { return "launches"; }
    const char* help() const override { return "The cases and launches of each job."; }
    void declare(po::options_description& d) override {
        declare_common(d, m_common); // --format, --strict, ...
        d.add_options()("job", po::value<std::string>(&m_job), "count this job only");
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        std::map<std::string, std::pair<long long, long long>> counts; // cases, launches
        for (const pooled_case& c : pool_cases(rs.cases))
            if (m_job.empty() || c.job == m_job) {
                counts[c.job].first += 1;
                counts[c.job].second += static_cast<long long>(c.launches.size());
            }
        table t;
        t.add_column("job", "job");
        t.add_column("cases", "cases");
        t.add_column("launches", "launches");
        for (const auto& [job, n] : counts)
            t.rows.push_back({text_cell(job), int_cell(n.first), int_cell(n.second)});
        print_tables(out, m_common.format, {{"launches", t}});
        return 0;
    }

    std::string m_job;
};

} // namespace

RINGSCALE_STATS_FACTORY(launches, launches_command)

} // namespace ringscale::analysis
