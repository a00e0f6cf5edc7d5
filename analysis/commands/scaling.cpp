// `ringscale-stats scaling INPUT...`: speedup, efficiency and Karp-Flatt per family.
#include "shared.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

struct scaling_command final : input_command {
    const char* name() const override { return "scaling"; }
    const char* help() const override {
        return "Speedup, efficiency (bootstrap CIs) and Karp-Flatt serial fraction per family "
               "of cases differing only in P, against a base case; memory against P; an "
               "efficiency above 1.1 and a Karp-Flatt value outside [0, 1] are flagged; "
               "collectives are refused (busbw against P is their measure).";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        declare_bootstrap(d, m_opt.replicates, m_opt.seed);
        declare_base_p(d, m_opt.base_p, m_opt.min_launches);
        declare_pool_resources(d, m_pool_resources);
    }
    void finish(const po::variables_map& vm, std::vector<std::string> args) override {
        input_command::finish(vm, std::move(args));
        m_opt.level = m_common.level;
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto pooled = pool_with_notes(rs, m_pool_resources);
        const auto results = scale_families(find_families(pooled), m_opt);
        if (results.empty())
            throw config_error("no family of cases differing only in P has two or more P");
        print_tables(out, m_common.format, {{"scaling", scaling_table(results)}});
        // One line when some CIs rest on iterations alone (a case with too few launches).
        std::size_t n = 0;
        for (const scaling_result& r : results)
            for (const scaling_point& p : r.points)
                n += p.resampled != "launches";
        if (n > 0)
            note(fmt::format("launch-to-launch noise is unknown for {} row(s) (fewer than {} "
                             "launches of the case or its base): their CIs cover iteration noise "
                             "only (repeat launches: ringscale --repeat N)",
                             n, std::max<std::size_t>(2, m_opt.min_launches)));
        return 0;
    }

    scaling_options m_opt;
};

} // namespace

RINGSCALE_STATS_FACTORY(scaling, scaling_command)

} // namespace ringscale::analysis
