#include "stability.hpp"

#include "analysis/statistics/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>

namespace ringscale::analysis::predict {

namespace {

/// A figure as people read it, from a calibration (NaN when it has none).
struct figure_reader {
    std::string name;
    const char* unit;
    std::function<double(const calibration&)> value;
};

std::vector<figure_reader> readers(const calibration& any) {
    std::vector<figure_reader> out;
    const auto rate = [](double s) { return s > 0 ? 1e-9 / s : unknown; };
    for (const auto& [dev, f] : any.compute) {
        const std::string d = dev;
        const auto get = [d](const calibration& c) -> const compute_figures* {
            const auto it = c.compute.find(d);
            return it == c.compute.end() ? nullptr : &it->second;
        };
        out.push_back({"attention rate (" + d + ")", "GFLOP/s", [=](const calibration& c) {
                           const compute_figures* f = get(c);
                           return f ? rate(f->s_per_attn_flop) : unknown;
                       }});
        out.push_back({"GEMM rate (" + d + ")", "GFLOP/s", [=](const calibration& c) {
                           const compute_figures* f = get(c);
                           return f ? rate(f->s_per_gemm_flop) : unknown;
                       }});
    }
    for (int level = 0; level < 2; ++level) {
        const char* where = level == 0 ? "intra" : "inter";
        out.push_back({fmt::format("alpha {}", where), "us/step",
                       [=](const calibration& c) { return 1e6 * c.links[level].alpha_s; }});
        out.push_back({fmt::format("beta {}", where), "GB/s busbw",
                       [=](const calibration& c) { return c.links[level].beta_bps / 1e9; }});
    }
    return out;
}

struct round_fit {
    calibration point;
    std::vector<calibration> reps;
};

} // namespace

calibration_set launch_round(const calibration_set& set, std::size_t k) {
    calibration_set out = set;
    out.compute.clear();
    out.links.clear();
    for (const compute_obs& o : set.compute)
        if (k < o.y.size()) {
            out.compute.push_back(o);
            out.compute.back().y = {o.y[k]};
        }
    for (const link_obs& o : set.links)
        if (k < o.y.size()) {
            out.links.push_back(o);
            out.links.back().y = {o.y[k]};
        }
    return out;
}

std::vector<std::string> unstable_figures(const calibration_set& set, std::size_t replicates,
                                          double level, std::uint64_t seed) {
    std::size_t rounds = 0;
    for (const compute_obs& o : set.compute)
        rounds = std::max(rounds, o.y.size());
    for (const link_obs& o : set.links)
        rounds = std::max(rounds, o.y.size());
    if (rounds < 2)
        return {};
    std::vector<round_fit> fits;
    for (std::size_t k = 0; k < rounds; ++k) {
        const calibration_set r = launch_round(set, k);
        std::vector<double> cy, ly;
        observation_medians(r, cy, ly);
        fits.push_back(
            {fit_calibration(r, cy, ly), bootstrap_calibrations(r, replicates, seed + k)});
    }
    std::vector<std::string> out;
    for (const figure_reader& f : readers(fits.front().point)) {
        // Each round's value and band; the pair of rounds furthest apart decides.
        std::vector<std::pair<double, interval>> v;
        for (const round_fit& r : fits) {
            std::vector<double> reps;
            for (const calibration& c : r.reps)
                if (const double x = f.value(c); std::isfinite(x))
                    reps.push_back(x);
            const double x = f.value(r.point);
            v.push_back({x, reps.size() >= 2 && std::isfinite(x) ? percentile_interval(reps, level)
                                                                 : interval{unknown, unknown}});
        }
        std::size_t lo = 0, hi = 0; // the rounds with the lowest band top and highest bottom
        for (std::size_t k = 0; k < v.size(); ++k) {
            if (!std::isfinite(v[k].second.lo))
                continue;
            if (!std::isfinite(v[lo].second.lo) || v[k].second.hi < v[lo].second.hi)
                lo = k;
            if (!std::isfinite(v[hi].second.lo) || v[k].second.lo > v[hi].second.lo)
                hi = k;
        }
        const interval a = v[lo].second, b = v[hi].second;
        if (std::isfinite(a.lo) && std::isfinite(b.lo) && a.hi < b.lo)
            out.push_back(fmt::format(
                "{}: {:.4g} {} [{:.4g}, {:.4g}] in launch round {} against {:.4g} [{:.4g}, "
                "{:.4g}] in round {}",
                f.name, v[lo].first, f.unit, a.lo, a.hi, lo + 1, v[hi].first, b.lo, b.hi, hi + 1));
    }
    return out;
}

} // namespace ringscale::analysis::predict
