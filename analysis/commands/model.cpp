// `ringscale-stats model INPUT...`: t(p) per family and t(p, S) per group of attention cases,
// with predictions (--predict) and their bootstrap bands.
#include "shared.hpp"

#include "option_ranges.hpp"

#include "analysis/models/model_multi_study.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

/// "p=64,S=1M;p=8,S=128K" -> (64, 1048576), (8, 131072); config_error naming the item.
std::vector<point2> parse_predict_points(const std::string& text) {
    std::vector<point2> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(';', start), text.size());
        const std::string point = text.substr(start, end - start);
        std::optional<double> p, s;
        for (const auto& item : split_list(point, "predict")) {
            const auto eq = item.find('=');
            const std::string name = eq == std::string::npos ? "" : item.substr(0, eq);
            if (name == "p" || name == "P")
                p = in_range("predict p", parse_double(item.substr(eq + 1), "predict p"),
                             predict_ranks);
            else if (name == "S" || name == "s")
                s = in_range("predict S",
                             static_cast<double>(parse_size(item.substr(eq + 1), "predict S")),
                             predict_tokens);
            else
                throw config_error(fmt::format("--predict: '{}' is not p=N or S=N (write "
                                               "p=64,S=1M, points separated by ';')",
                                               item));
        }
        if (!p || !s)
            throw config_error(fmt::format(
                "--predict: '{}' needs both p (at least 1) and S, e.g. p=64,S=1M", point));
        out.push_back({*p, *s});
        start = end + 1;
    }
    return out;
}

struct model_command final : input_command {
    const char* name() const override { return "model"; }
    const char* help() const override {
        return "Fit t(p) = c0 + c1*p^e*log2(p)^k per family (Extra-P normal form, LOO-CV "
               "selection) and t(p, S) per group of attention cases measured at 3+ P and S; "
               "--predict 8,64 or p=64,S=1M extrapolates with a bootstrap band.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        declare_bootstrap(d, m_replicates, m_seed);
        d.add_options()("predict", po::value<std::string>()->notifier([this](const auto& text) {
            if (text.find('=') != std::string::npos)
                m_at_ps = parse_predict_points(text);
            else if (!text.empty())
                for (const auto& item : split_list(text, "predict"))
                    m_at_p.push_back(
                        in_range("predict", parse_double(item, "predict"), predict_ranks));
        }),
                        "comma list of P to predict, e.g. 8,64,1024; or points of the "
                        "two-parameter models t(p, S), e.g. p=64,S=1M;p=128,S=2M");
    }
    int run(std::ostream& out) const override;

    std::size_t m_replicates = 2000;
    std::uint64_t m_seed = 1;
    std::vector<double> m_at_p;  ///< --predict 8,64: P of the t(p) models
    std::vector<point2> m_at_ps; ///< --predict p=64,S=1M: points of the t(p, S) models
};

int model_command::run(std::ostream& out) const {
    const result_set rs = load(m_common.inputs, m_common.strict);
    const auto pooled = pool_with_notes(rs, false);
    std::vector<std::string> refusals;
    const double level = m_common.level;
    const auto models =
        fit_family_models(find_families(pooled), m_at_p, m_replicates, m_seed, level, refusals);
    const auto studies = fit_study_models(pooled, m_at_ps, m_replicates, m_seed, level);
    for (const auto& r : refusals)
        note(r);
    if (models.empty() && studies.empty())
        throw config_error("no family has at least 3 distinct P: nothing to model");
    if (!m_at_ps.empty() && studies.empty())
        throw config_error("--predict p=..,S=..: no group of cases has 3 or more distinct P "
                           "and S to model t(p, S)");
    std::vector<std::pair<std::string, table>> tables;
    if (!models.empty())
        tables.emplace_back("models", model_table(models));
    if (!m_at_p.empty())
        tables.emplace_back("predictions", prediction_table(models));
    if (!studies.empty())
        tables.emplace_back("models of p and S", study_model_table(studies));
    if (!m_at_ps.empty())
        tables.emplace_back("predictions of p and S", study_prediction_table(studies));
    print_tables(out, m_common.format, tables);
    return 0;
}

} // namespace

RINGSCALE_STATS_FACTORY(model, model_command)

} // namespace ringscale::analysis
