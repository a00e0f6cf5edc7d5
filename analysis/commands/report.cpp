// `ringscale-stats report DIR INPUT...`: DIR/report.md with every table and the plots.
#include "history_load.hpp"
#include "history_options.hpp"
#include "shared.hpp"

#include "analysis/presentation/report.hpp"

#include "analysis/comparisons/compare.hpp"

#include "src/base/error.hpp"

#include <ctime>
#include <fmt/format.h>
#include <optional>

namespace ringscale::analysis {

namespace {

struct report_command final : input_command {
    const char* name() const override { return "report"; }
    const char* arguments() const override { return "DIR INPUT..."; }
    const char* help() const override {
        return "Write DIR/report.md, DIR/report.html and PNG plots (gnuplot).";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common, false);
        declare_bootstrap(d, m_scaling.replicates, m_scaling.seed);
        declare_base_p(d, m_scaling.base_p, m_scaling.min_launches);
        declare_tie_floor(d, m_tie_floor);
        declare_pool_resources(d, m_pool_resources);
        declare_hardware(d, m_hardware);
        // --skip-marked leaves marked launches out of every section; by default
        // they stay and weigh through the decision rule. (report --history: the same flag.)
        declare_marked(d, m_skip_marked);
        d.add_options()("max-heatmaps",
                        po::value<std::size_t>(&m_report.max_heatmaps)
                            ->default_value(6)
                            ->notifier([](std::size_t n) {
                                RINGSCALE_REQUIRE(n <= 1000,
                                                  "--max-heatmaps must be between 0 and 1000");
                            }),
                        "heatmaps for the most imbalanced cases")(
            "family-plots", po::value<std::string>(&m_report.family_plots),
            "also draw one scaling plot per family whose label contains this text ('all': "
            "every family); the question plots cover every family either way")(
            "baseline", po::value<std::string>(&m_baseline),
            "a section comparing the study with this baseline (a results file or directory), "
            "as `compare BASELINE STUDY`: a branch against main")(
            "history", po::value<std::vector<std::string>>(&m_history),
            "a History section from the launches under this directory (repeatable), indexed "
            "as `history` indexes them: change points, trend plots, every series in CSV")(
            "history-index", po::value<std::string>(&m_history_index),
            "the history's index file (default: ringscale-history.sqlite in the first "
            "--history DIR)")("history-plots",
                              po::value<std::size_t>(&m_report.history_plots)
                                  ->default_value(6)
                                  ->notifier([](std::size_t n) {
                                      RINGSCALE_REQUIRE(
                                          n <= 100, "--history-plots must be between 0 and 100");
                                  }),
                              "trend plots of the series that changed most recently");
        declare_series_options(d, m_history_opt, "history-");
    }
    void finish(const po::variables_map& vm, std::vector<std::string> args) override {
        RINGSCALE_REQUIRE(!args.empty(), "report needs an output directory: report DIR INPUT...");
        m_report.dir = args.front();
        take_inputs(name(), {args.begin() + 1, args.end()}, m_common);
        m_scaling.level = m_common.level;
        if (!m_history.empty() && m_history_index.empty())
            m_history_index = default_history_index(m_history, "--history", "--history-index");
        finish_series_options(vm, m_history_opt, "history-");
    }
    int run(std::ostream& out) const override;

    scaling_options m_scaling; ///< and the bootstrap of the crossovers and models
    double m_tie_floor = 0.01;
    std::string m_hardware; ///< the map's ("": no map)
    report_options m_report;
    std::string m_baseline;             ///< --baseline INPUT ("": none)
    std::vector<std::string> m_history; ///< --history DIR...
    std::string m_history_index;
    history::series_options m_history_opt; ///< history's defaults
    bool m_skip_marked = false;            ///< --skip-marked
};

/// The pooled cases as the report reads them: with --skip-marked, without their marked
/// launches (a case left with none is dropped, with one note).
std::vector<pooled_case> marked_or_skipped(std::vector<pooled_case> pooled, bool skip) {
    if (!skip)
        return pooled;
    std::vector<pooled_case> out;
    std::size_t dropped = 0, launches = 0;
    for (const pooled_case& p : pooled) {
        pooled_case kept = without_marked(p);
        launches += p.launches.size() - kept.launches.size();
        if (kept.launches.empty() && !p.launches.empty() && kept.not_ok.empty()) {
            ++dropped;
            continue;
        }
        out.push_back(std::move(kept));
    }
    if (launches > 0)
        note(fmt::format("--skip-marked: {} marked launch(es) left out, {} case(s) with none "
                         "left dropped from the report",
                         launches, dropped));
    return out;
}

int report_command::run(std::ostream& out) const {
    // The map's hardware first: a bad profile file is refused before anything is read. A map
    // for hardware the study did not run on only when asked for (--hardware).
    const std::optional<predict::hardware_profile> hw =
        m_hardware.empty()
            ? std::nullopt
            : std::optional<predict::hardware_profile>(predict::load_hardware(m_hardware));
    const result_set rs = load(m_common.inputs, m_common.strict);
    const std::unique_ptr<history_data> history =
        m_history.empty()
            ? nullptr
            : read_history(m_history, m_history_index, m_history_opt, m_common.strict);
    const auto pooled = marked_or_skipped(pool_with_notes(rs, m_pool_resources), m_skip_marked);
    const auto rows = summarize_with_notes(pooled, m_common);
    const auto families = find_families(pooled);
    const auto scaling = scale_families(families, m_scaling);
    const scaling_options& b = m_scaling;
    report_inputs in;
    in.results = &rs;
    in.rows = &rows;
    in.scaling = &scaling;
    in.pooled = &pooled;
    in.notes = resource_notes(pooled);
    const auto models =
        fit_family_models(families, {}, b.replicates, b.seed, b.level, in.model_refusals);
    in.models = &models;
    const crossover_result crossover =
        find_crossovers(pooled, {b.replicates, b.seed, b.level, b.min_launches, m_tie_floor});
    in.crossover = &crossover;
    const auto studies = fit_study_models(pooled, {}, b.replicates, b.seed, b.level);
    in.study_models = &studies;
    const accuracy_result accuracy = accuracy_of(pooled, accuracy_tolerance{});
    in.accuracy = &accuracy;
    // train_step --numerics: `numerics`' verdicts at its default k.
    const numerics_result numerics = numerics_of(pooled, 2.0);
    in.numerics = &numerics;
    // The crossover map at scale on the --hardware profile, only when one was named.
    const auto map = hw ? predict::report_map(pooled, *hw) : std::nullopt;
    if (map)
        in.predict_map = &*map;
    in.settings =
        fmt::format("confidence {:g}, bootstrap {} replicates (seed {}), outliers {}", b.level,
                    b.replicates, b.seed, m_common.remove_outliers ? "removed" : "kept");
    if (history)
        in.history = &history->set;
    // --baseline: matched by identity, as `compare` matches them. The comparison points into
    // both pooled sets and they into the result sets: all live as long as `in`.
    result_set base;
    std::vector<pooled_case> base_pooled, study_pooled;
    std::optional<comparison> compared;
    if (!m_baseline.empty()) {
        base = load({m_baseline}, m_common.strict);
        base_pooled = pool_cases(base.cases, true);
        study_pooled = pool_cases(rs.cases, true);
        compare_options copt;
        copt.replicates = b.replicates;
        copt.seed = b.seed;
        copt.level = b.level;
        compared = compare_sets(base_pooled, study_pooled, copt);
        in.compared = &*compared;
        in.baseline = m_baseline;
    }
    const auto pngs = write_report(in, m_report);
    out << fmt::format("wrote {0}/report.md, {0}/report.html and {1} plot(s): {2}\n", m_report.dir,
                       pngs.size(), fmt::join(pngs, " "));
    return 0;
}

} // namespace

RINGSCALE_STATS_FACTORY(report, report_command)

} // namespace ringscale::analysis
