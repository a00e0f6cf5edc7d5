#include "evaluate.hpp"

#include "analysis/statistics/bootstrap.hpp"

#include <cmath>
#include <fmt/format.h>
#include <set>

namespace ringscale::analysis::predict {

namespace {

/// log(measured / predicted) of every calibration case at P (all P when `p` is 0).
void residuals_at(const calibration_set& set, const calibration& cal, int p,
                  std::vector<double>& out) {
    for (const target& t : set.cases) {
        if (p != 0 && t.where.world != p)
            continue;
        const step_prediction s = predict_target(t, cal.for_device(t.device_key));
        const double m = measured_median(t);
        if (s.ok() && s.time.total() > 0 && m > 0)
            out.push_back(std::log(m / s.time.total()));
    }
}

} // namespace

double measured_median(const target& t) {
    if (!t.measured)
        return unknown;
    std::vector<double> s = t.measured->steps();
    return median_inplace(s);
}

model_error calibration_error(const calibration_set& set, const calibration& point,
                              const std::vector<double>& cy, const std::vector<double>& ly) {
    std::set<int> ps;
    for (const compute_obs& o : set.compute)
        ps.insert(o.world_size);
    model_error e;
    if (ps.size() >= 2) {
        for (int p : ps) {
            std::vector<double> held = cy;
            for (std::size_t i = 0; i < set.compute.size(); ++i)
                if (set.compute[i].world_size == p)
                    held[i] = unknown;
            residuals_at(set, fit_calibration(set, held, ly), p, e.log_ratio);
        }
        e.basis = fmt::format("leave-one-P-out over {} P, {} cases", ps.size(), e.log_ratio.size());
    }
    if (e.log_ratio.empty()) {
        residuals_at(set, point, 0, e.log_ratio);
        e.basis = fmt::format("in sample, {} cases", e.log_ratio.size());
    }
    return e;
}

figures figure_source::for_target(const target& t, const calibration* cal) const {
    if (hardware)
        return profile_figures(*hardware);
    return cal->for_device(t.device_key);
}

std::vector<predicted> predict_all(const std::vector<target>& targets, const figure_source& src,
                                   const model_error& err, double level, std::uint64_t seed) {
    std::vector<predicted> out;
    splitmix64 rng(seed);
    const std::size_t reps =
        src.hardware || !src.replicates ? 1000 : std::max<std::size_t>(src.replicates->size(), 1);
    for (const target& t : targets) {
        predicted p;
        p.t = t;
        p.point = predict_target(t, src.for_target(t, src.point));
        if (!p.point.ok()) {
            out.push_back(std::move(p));
            continue;
        }
        std::vector<double> v;
        for (std::size_t b = 0; b < reps; ++b) {
            double base = p.point.time.total();
            if (!src.hardware && src.replicates && !src.replicates->empty()) {
                const step_prediction r =
                    predict_target(t, src.for_target(t, &(*src.replicates)[b]));
                base = r.ok() ? r.time.total() : unknown;
            }
            const double e =
                err.log_ratio.empty() ? 0 : err.log_ratio[rng.index(err.log_ratio.size())];
            if (std::isfinite(base))
                v.push_back(base * std::exp(e));
        }
        if (!v.empty()) {
            const interval band = percentile_interval(v, level);
            p.lo = band.lo;
            p.hi = band.hi;
        }
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace ringscale::analysis::predict
