// `ringscale-stats compare BASE NEW`: matched cases, their change with a CI and a verdict;
// exit 1 on a regression of time or memory.
#include "shared.hpp"

#include "option_ranges.hpp"

#include "analysis/comparisons/compare.hpp"
#include "analysis/measures/resources.hpp"
#include "analysis/statistics/decision.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

struct compare_command final : subcommand {
    const char* name() const override { return "compare"; }
    const char* arguments() const override { return "BASE NEW"; }
    const char* help() const override {
        return "Match cases between BASE and NEW; change in % with a two-level bootstrap CI "
               "(launches, then iterations) and p (Holm), judged by the one decision rule "
               "(>= 2 launches per side; marks weigh by their effect); peak memory. Exit 0: no "
               "regression, 1: regression (time or memory), 6: with --fail-on regression, a "
               "case not decided and no regression, 2: error.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        declare_bootstrap(d, m_opt.replicates, m_opt.seed);
        d.add_options()("threshold",
                        po::value<std::string>()->default_value("5%")->notifier([this](auto t) {
                            if (!t.empty() && t.back() == '%')
                                t.pop_back();
                            m_opt.threshold = parse_double(t, "threshold") / 100.0;
                            RINGSCALE_REQUIRE(m_opt.threshold >= 0,
                                              "--threshold must be a change of 0% or more");
                            in_range("threshold", 100 * m_opt.threshold, threshold_percent);
                        }),
                        "slowdown that counts as a regression, in percent")(
            "alpha",
            po::value<double>(&m_opt.alpha)->default_value(0.05, "0.05")->notifier([](double a) {
                in_range("alpha", a, probability);
            }),
            "significance level (Holm-adjusted across cases)");
        declare_min_launches(d, m_opt.min_launches,
                             "launches per side (at least 2) needed to call a regression; the "
                             "test is a two-level bootstrap (launches, then iterations); with "
                             "fewer, a difference is 'not decided'");
        declare_marked(d, m_opt.skip_marked);
        d.add_options()("fail-on", po::value<std::string>()->notifier([this](const auto& v) {
            RINGSCALE_REQUIRE(v == "regression", "--fail-on takes 'regression' (got '" + v + "')");
            m_fail_on = true;
        }),
                        "regression: exit 1 on a regression, else 6 when a case was not "
                        "decided (the gate could not judge it), else 0");
    }
    void finish(const po::variables_map&, std::vector<std::string> args) override {
        RINGSCALE_REQUIRE(args.size() == 2, "compare needs exactly two inputs: BASE NEW");
        m_common.inputs = std::move(args);
        m_opt.level = m_common.level;
    }
    int run(std::ostream& out) const override;

    common_options m_common; ///< inputs: BASE, NEW
    compare_options m_opt;
    bool m_fail_on = false; ///< --fail-on regression
};

int compare_command::run(std::ostream& out) const {
    const result_set base = load({m_common.inputs[0]}, m_common.strict);
    const result_set next = load({m_common.inputs[1]}, m_common.strict);
    // Matched by identity: a launch's threads and cores are compared, not split on.
    const auto pb = pool_cases(base.cases, true);
    const auto pn = pool_cases(next.cases, true);
    const comparison cmp = compare_sets(pb, pn, m_opt);
    print_tables(out, m_common.format, {{"comparisons", compare_table(cmp)}});
    if (const std::size_t n = cmp.iteration_level())
        note(fmt::format("launch-to-launch noise is unknown for {} case(s) with fewer than {} "
                         "launches on a side: not decided there, never a regression (repeat "
                         "launches: ringscale --repeat N)",
                         n, std::max<std::size_t>(2, m_opt.min_launches)));
    for (const auto* c : cmp.only_base)
        note(fmt::format("only in BASE, not compared: {} P={}", c->label(), c->world_size));
    for (const auto* c : cmp.only_new)
        note(fmt::format("only in NEW, not compared: {} P={}", c->label(), c->world_size));
    std::size_t regressions = 0, marked = 0;
    for (const auto& c : cmp.matched) {
        regressions += c.result == verdict::regression;
        marked += c.marked_base + c.marked_new > 0;
    }
    const std::size_t undecided = cmp.undecided();
    if (marked > 0)
        note(m_opt.skip_marked
                 ? fmt::format("{} case(s) have launches marked as measured on a contended "
                               "machine or while the sentinel drifted: --skip-marked left them "
                               "out, and {} case(s) are not decided (the verdict column says why)",
                               marked, undecided)
                 : fmt::format("{} case(s) have launches marked as measured on a contended "
                               "machine or while the sentinel drifted: they stay, and a mark "
                               "whose estimated effect could account for the margin leaves the "
                               "case not decided (the verdict column says why; --skip-marked "
                               "compares the unmarked launches alone)",
                               marked));
    note(fmt::format("{} case(s) compared, {} regression(s) (threshold {:g}%, alpha {:g})",
                     cmp.matched.size(), regressions, 100 * m_opt.threshold, m_opt.alpha));
    if (const std::string d = detectability_note(cmp, m_opt.threshold, m_opt.alpha); !d.empty())
        note(d);
    const auto memory = memory_regressions(cmp, m_opt.threshold);
    for (const memory_change& m : memory)
        note(describe(m));
    if (!memory.empty())
        return exit_regression;
    const int code = compare_exit_code(cmp, m_fail_on);
    if (code == exit_not_decided)
        note(fmt::format("--fail-on regression: {} case(s) not decided, none a regression: "
                         "exit {} (not decided)",
                         undecided, exit_not_decided));
    return code;
}

} // namespace

RINGSCALE_STATS_FACTORY(compare, compare_command)

} // namespace ringscale::analysis
