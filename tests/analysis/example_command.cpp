// `ringscale-stats launches INPUT... [--job NAME]`: the cases and launches of each job.
#include "analysis/commands/shared.hpp"

#include <map>

namespace ringscale::analysis {

namespace {

struct launches_command final : subcommand {
    const char* name() const override { return "launches"; }
    const char* help() const override { return "The cases and launches of each job."; }
    void declare(po::options_description& d) override {
        declare_common(d, m_common); // --format, --strict, ...
        d.add_options()("job", po::value<std::string>(&m_job), "count this job only");
    }
    void finish(const po::variables_map&, std::vector<std::string> args) override {
        take_inputs(name(), std::move(args), m_common);
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

    common_options m_common;
    std::string m_job;
};

} // namespace

std::unique_ptr<subcommand> make_launches_command() {
    return std::make_unique<launches_command>();
}

} // namespace ringscale::analysis
