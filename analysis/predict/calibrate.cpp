#include "calibrate.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "calibrate_links.hpp"

#include "src/base/backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace ringscale::analysis::predict {

namespace {

/// Unit figures: every compute figure 1 s per unit, free links, width 1; the cost parts of a
/// prediction are then the rank's work.
figures unit_figures(double node_cores, bool gpu) {
    figures f;
    f.compute = {1, 1, 1, 1};
    f.links[0] = f.links[1] = {0, std::numeric_limits<double>::infinity()};
    f.node_cores = node_cores;
    f.gpu = gpu;
    f.fixed_width = 1;
    return f;
}

double width_at(const compute_obs& o, double eta) {
    return o.gpu ? 1.0 : std::max(1e-3, std::min(1 + eta * (o.threads - 1), o.share));
}

struct compute_fit {
    std::vector<double> c;
    double eta = 1;
    double rss = std::numeric_limits<double>::infinity();
    std::vector<double> abs_log; ///< |log(measured / fitted)| per case
};

fit_quality quality_of(std::vector<double> abs_log) {
    fit_quality q;
    q.rows = static_cast<int>(abs_log.size());
    if (!abs_log.empty()) {
        q.max_abs = *std::max_element(abs_log.begin(), abs_log.end());
        q.median_abs = median_inplace(abs_log);
    }
    return q;
}

/// `fixed_eta` (in [0, 1]) tries that speed-up per extra thread alone.
compute_fit fit_device(const std::vector<const compute_obs*>& obs, const std::vector<double>& y,
                       double fixed_eta) {
    compute_fit best;
    const bool fixed = fixed_eta >= 0;
    for (int k = fixed ? 0 : 20; k >= 0; --k) { // eta = 1, 0.95, ..., 0: ties keep the larger
        const double eta = fixed ? fixed_eta : k / 20.0;
        std::vector<std::vector<double>> x;
        std::vector<double> w;
        for (std::size_t i = 0; i < obs.size(); ++i) {
            const double width = width_at(*obs[i], eta);
            const auto& f = obs[i]->x;
            x.push_back({f[0] / width, f[1] / width, f[2] / width, f[3]});
            w.push_back(1 / y[i]);
        }
        const std::vector<double> c = nnls(x, y, w);
        double rss = 0;
        std::vector<double> abs_log;
        for (std::size_t i = 0; i < x.size(); ++i) {
            double v = 0;
            for (std::size_t j = 0; j < 4; ++j)
                v += std::isfinite(c[j]) ? c[j] * x[i][j] : 0;
            rss += (v / y[i] - 1) * (v / y[i] - 1);
            if (v > 0)
                abs_log.push_back(std::fabs(std::log(y[i] / v)));
        }
        if (rss < best.rss * (1 - 1e-9))
            best = {c, eta, rss, std::move(abs_log)};
    }
    return best;
}

bool has_compute(const case_data& c) {
    return !c.compute_s.empty() && c.compute_s.size() == c.rows * c.world;
}

launch_samples mean_rank_compute(const pooled_case& c) {
    launch_samples out;
    for (const case_data* l : c.launches) {
        if (!has_compute(*l))
            continue;
        std::vector<double> v;
        for (std::size_t r : l->measured_rows()) {
            double s = 0;
            for (std::size_t k = 0; k < l->world; ++k)
                s += l->compute_s[r * l->world + k];
            v.push_back(s / static_cast<double>(l->world));
        }
        if (!v.empty())
            out.push_back(std::move(v));
    }
    return out;
}

/// SD of log(rank compute / mean over ranks) within an iteration, pooled over iterations and
/// launches (P / (P - 1) corrects for the mean being estimated); NaN below P = 2.
double compute_jitter(const pooled_case& c) {
    double ss = 0;
    std::size_t n = 0;
    for (const case_data* l : c.launches) {
        if (!has_compute(*l) || l->world < 2)
            continue;
        for (std::size_t r : l->measured_rows()) {
            double mean = 0;
            for (std::size_t k = 0; k < l->world; ++k)
                mean += l->compute_s[r * l->world + k] / static_cast<double>(l->world);
            for (std::size_t k = 0; k < l->world && mean > 0; ++k) {
                const double v = l->compute_s[r * l->world + k];
                if (v > 0) {
                    ss += std::log(v / mean) * std::log(v / mean);
                    ++n;
                }
            }
        }
    }
    const double p = c.world_size;
    return n > 0 && p >= 2 ? std::sqrt(ss / static_cast<double>(n) * p / (p - 1)) : std::nan("");
}

std::array<double, 4> features(const target& t, double node_cores) {
    const bool gpu = t.identity.count("device") &&
                     find_device_kind(t.identity.at("device")) == device_kind::cuda;
    const figures f = unit_figures(node_cores, gpu);
    const int p = t.where.world;
    std::vector<int> ranks;
    for (int r = 0; r < p && p <= 64; ++r)
        ranks.push_back(r);
    if (ranks.empty())
        ranks = {0, 1, p / 2 - 1, p / 2, p - 2, p - 1};
    std::array<double, 4> x{};
    for (int r : ranks) {
        const step_prediction s = predict_target(t, f, r);
        if (!s.ok())
            return {std::nan(""), 0, 0, 0};
        x[0] += s.time.attn / static_cast<double>(ranks.size());
        x[1] += s.time.gemm / static_cast<double>(ranks.size());
        x[2] += s.time.mem / static_cast<double>(ranks.size());
        x[3] += s.time.calls / static_cast<double>(ranks.size());
    }
    return x;
}

double max_affinity(const std::vector<pooled_case>& pooled) {
    double best = 0;
    for (const pooled_case& c : pooled)
        for (const case_data* l : c.launches)
            for (int a : l->affinity_cores)
                best = std::max(best, static_cast<double>(a));
    return best > 0 ? best : 1;
}

} // namespace

calibration_set gather_calibration(const std::vector<pooled_case>& pooled) {
    calibration_set set;
    set.node_cores = max_affinity(pooled);
    for (const pooled_case& c : pooled) {
        if (c.launches.empty())
            continue;
        if (c.job == "collectives") {
            add_link(c, set);
            continue;
        }
        target t = target_of(c);
        const launch_samples y = mean_rank_compute(c);
        if (y.empty()) {
            set.notes.push_back(fmt::format("{} P={}: no compute_s, left out of the compute "
                                            "calibration",
                                            c.label(), c.world_size));
        } else {
            compute_obs o;
            o.device_key = t.device_key;
            o.x = features(t, set.node_cores);
            o.y = y;
            o.world_size = c.world_size;
            o.case_index = set.cases.size();
            figures probe;
            probe.node_cores = set.node_cores;
            o.gpu = t.identity.count("device") &&
                    find_device_kind(t.identity.at("device")) != device_kind::cpu;
            o.threads = rank_threads(t, probe);
            o.share = rank_share(t, probe);
            o.jitter = compute_jitter(c);
            if (std::isfinite(o.x[0]))
                set.compute.push_back(std::move(o));
            else
                set.notes.push_back(fmt::format("{} P={}: {}", c.label(), c.world_size,
                                                predict_target(t, unit_figures(1, false)).refusal));
        }
        set.cases.push_back(std::move(t));
    }
    return set;
}

figures calibration::for_device(const std::string& device_key) const {
    figures f;
    const auto it = compute.find(device_key);
    if (it != compute.end())
        f.compute = it->second;
    const auto g = gpu.find(device_key);
    f.gpu = g != gpu.end() && g->second;
    const auto e = thread_efficiency.find(device_key);
    f.thread_efficiency = e == thread_efficiency.end() ? 1.0 : e->second;
    const auto j = rank_jitter.find(device_key);
    f.rank_jitter = j == rank_jitter.end() ? 0.0 : j->second;
    f.links = links;
    f.per_op = per_op;
    f.node_cores = node_cores;
    f.node_links = node_links;
    f.congestion = congestion;
    return f;
}

calibration fit_calibration(const calibration_set& set, const std::vector<double>& cy,
                            const std::vector<double>& ly,
                            const std::map<std::string, double>& fixed_eta) {
    calibration cal;
    cal.node_cores = set.node_cores;
    std::set<std::string> devices;
    for (const compute_obs& o : set.compute)
        devices.insert(o.device_key);
    for (const std::string& dev : devices) {
        std::vector<const compute_obs*> obs;
        std::vector<double> y;
        for (std::size_t i = 0; i < set.compute.size(); ++i)
            if (set.compute[i].device_key == dev && std::isfinite(cy[i]) && cy[i] > 0) {
                obs.push_back(&set.compute[i]);
                y.push_back(cy[i]);
            }
        if (obs.empty())
            continue;
        const auto eta = fixed_eta.find(dev);
        const compute_fit f = fit_device(obs, y, eta == fixed_eta.end() ? -1.0 : eta->second);
        cal.compute[dev] = {f.c[0], f.c[1], f.c[2], f.c[3]};
        cal.thread_efficiency[dev] = f.eta;
        cal.compute_quality[dev] = quality_of(f.abs_log);
        cal.gpu[dev] = obs.front()->gpu;
        std::vector<double> jitter;
        for (const compute_obs* o : obs)
            if (std::isfinite(o->jitter))
                jitter.push_back(o->jitter);
        cal.rank_jitter[dev] = jitter.empty() ? 0.0 : median_inplace(jitter);
    }
    fit_links(set, ly, cal);
    return cal;
}

void observation_medians(const calibration_set& set, std::vector<double>& cy,
                         std::vector<double>& ly) {
    cy.clear();
    ly.clear();
    for (const compute_obs& o : set.compute)
        cy.push_back(pooled_median(o.y));
    for (const link_obs& o : set.links)
        ly.push_back(pooled_median(o.y));
}

std::vector<calibration> bootstrap_calibrations(const calibration_set& set, std::size_t replicates,
                                                std::uint64_t seed,
                                                const replicate_progress& progress) {
    const auto start = std::chrono::steady_clock::now();
    splitmix64 rng(seed);
    std::vector<calibration> out;
    std::vector<double> cy(set.compute.size()), ly(set.links.size()), buf;
    for (std::size_t b = 0; b < replicates; ++b) {
        for (std::size_t i = 0; i < set.compute.size(); ++i) {
            resample_two_level(set.compute[i].y, buf, rng);
            cy[i] = median_inplace(buf);
        }
        for (std::size_t i = 0; i < set.links.size(); ++i) {
            resample_two_level(set.links[i].y, buf, rng);
            ly[i] = median_inplace(buf);
        }
        out.push_back(fit_calibration(set, cy, ly));
        // The jitter is a median over cases: resample the cases.
        for (auto& [dev, j] : out.back().rank_jitter) {
            std::vector<double> per_case, drawn;
            for (const compute_obs& o : set.compute)
                if (o.device_key == dev && std::isfinite(o.jitter))
                    per_case.push_back(o.jitter);
            if (per_case.empty())
                continue;
            resample(per_case, drawn, rng);
            j = median_inplace(drawn);
        }
        if (progress)
            progress(
                b + 1,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return out;
}

} // namespace ringscale::analysis::predict
