// `ringscale-stats crossover INPUT...`: the fastest attention scheme per (S, P) and where two
// schemes trade places.
#include "shared.hpp"

#include "analysis/comparisons/crossover.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

struct crossover_command final : input_command {
    const char* name() const override { return "crossover"; }
    const char* help() const override {
        return "Which attention scheme is fastest at each (S, P), its margin over the "
               "runner-up (bootstrap CI over launches, then iterations) and peak memory per rank "
               "beside it; where two schemes trade places along S at fixed P. A verdict is "
               "confirmed only with 2+ launches of each scheme and a CI clear of the noise "
               "between cases; at P=1 every scheme does the same work and none is ranked.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        declare_bootstrap(d, m_opt.replicates, m_opt.seed);
        declare_min_launches(d, m_opt.min_launches,
                             "launches of each scheme (at least 2) needed to confirm a fastest "
                             "scheme or a crossing; the CIs resample launches, then iterations");
        declare_tie_floor(d, m_opt.min_floor);
        declare_pool_resources(d, m_pool_resources);
    }
    void finish(const po::variables_map& vm, std::vector<std::string> args) override {
        input_command::finish(vm, std::move(args));
        m_opt.level = m_common.level;
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto pooled = pool_with_notes(rs, m_pool_resources);
        const crossover_result r = find_crossovers(pooled, m_opt);
        if (r.cells.empty())
            throw config_error("no (S, P) with two or more attention schemes "
                               "(ring_attention, context_parallel) measured");
        print_tables(out, m_common.format,
                     {{"fastest scheme", crossover_cell_table(r)},
                      {"crossovers", crossover_point_table(r)}});
        note(fmt::format("crossover: a margin counts only above the noise floor of {:.1f}% ({}) "
                         "and with 2 or more launches of each scheme (ringscale --repeat N); P=1 "
                         "cells are identical work and never ranked",
                         100 * r.floor.fraction, r.floor.source));
        return 0;
    }

    crossover_options m_opt;
};

} // namespace

RINGSCALE_STATS_FACTORY(crossover, crossover_command)

} // namespace ringscale::analysis
