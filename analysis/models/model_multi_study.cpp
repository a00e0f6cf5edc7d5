#include "model_multi_study.hpp"

#include "analysis/presentation/views.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace ringscale::analysis {

namespace {

/// The study's axes and what only weak scaling adds: not part of a group's key.
bool is_axis(const std::string& name) {
    return name == schema::attr::seq_len || name == schema::attr::seq_len_per_rank ||
           name == schema::attr::seq_rule || name == schema::attr::scaling;
}

std::string group_label(const pooled_case& c) {
    std::string s = fmt::format("{}/{}", c.job, c.variant);
    for (const auto& [k, v] : c.params)
        if (!is_axis(k))
            s += fmt::format(" {}={}", k, v);
    return s;
}

/// The sequence length a pooled case ran (its seq_len attribute, identity or derived), or 0.
double case_seq_len(const pooled_case& c) {
    if (c.launches.empty())
        return 0;
    return c.launches.front()->number(schema::attr::seq_len).value_or(0.0);
}

} // namespace

std::vector<study_model> fit_study_models(const std::vector<pooled_case>& pooled,
                                          const std::vector<point2>& at, std::size_t replicates,
                                          std::uint64_t seed, double level) {
    std::map<std::string, std::vector<const pooled_case*>> groups;
    for (const pooled_case& c : pooled)
        if (!c.launches.empty() && case_seq_len(c) > 0)
            groups[group_label(c)].push_back(&c);
    std::vector<study_model> out;
    for (const auto& [label, members] : groups) {
        std::set<double> ps, ss;
        for (const pooled_case* c : members) {
            ps.insert(c->world_size);
            ss.insert(case_seq_len(*c));
        }
        if (ps.size() < 3 || ss.size() < 3 || members.size() < 6)
            continue;
        study_model m;
        m.label = label;
        std::vector<std::vector<double>> samples;
        for (const pooled_case* c : members) {
            samples.push_back(c->steps());
            std::vector<double> s = samples.back();
            m.pts.push_back({static_cast<double>(c->world_size), case_seq_len(*c)});
            m.t.push_back(median_inplace(s));
        }
        m.fit = select_multi_model(m.pts, m.t);
        if (!at.empty())
            m.predictions = predict_multi(m.pts, samples, m.fit, at, replicates, seed, level);
        out.push_back(std::move(m));
    }
    return out;
}

table study_model_table(const std::vector<study_model>& models) {
    std::vector<model_row> rows;
    for (const auto& m : models)
        rows.push_back(
            {m.label, m.pts.size(), m.fit.formula(), m.fit.smape, m.fit.cv_smape, m.fit.r2});
    return fit_table("group", "model t(p, S) [s]", rows);
}

table study_prediction_table(const std::vector<study_model>& models) {
    std::vector<prediction_row> rows;
    for (const auto& m : models) {
        double pmax = 0, smax = 0;
        for (const point2& x : m.pts) {
            pmax = std::max(pmax, x.p);
            smax = std::max(smax, x.s);
        }
        for (const auto& pr : m.predictions)
            rows.push_back({m.label, pr.p, cell{size_text(pr.s), pr.s}, pr.value, pr.lo, pr.hi,
                            pr.p > pmax || pr.s > smax ? "yes" : "no", pr.refusal});
    }
    return predictions_table("group", true, rows);
}

} // namespace ringscale::analysis
