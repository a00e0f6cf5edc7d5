#include "evaluate.hpp"

#include "analysis/statistics/bootstrap.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace ringscale::analysis::predict {

namespace {

/// log(measured / predicted) of every calibration case at P (all P when `p` is 0).
void residuals_at(const calibration_set& set, const calibration& cal, int p, model_error& out) {
    for (const target& t : set.cases) {
        if (p != 0 && t.where.world != p)
            continue;
        const step_prediction s = predict_target(t, cal.for_device(t.device_key));
        const double m = measured_median(t);
        if (s.ok() && s.time.total() > 0 && m > 0) {
            out.log_ratio.push_back(std::log(m / s.time.total()));
            out.at_p.push_back(t.where.world);
        }
    }
}

/// The errors of the cases at P = `p`.
std::vector<double> errors_at(const model_error& e, int p) {
    std::vector<double> out;
    for (std::size_t i = 0; i < e.log_ratio.size(); ++i)
        if (e.at_p[i] == p)
            out.push_back(e.log_ratio[i]);
    return out;
}

/// The direction a target at P extrapolates in: +1 above CALIB's P, -1 below, 0 within.
int direction(const model_error& e, int p) {
    return e.max_p > e.min_p && p > e.max_p ? 1 : e.max_p > e.min_p && p < e.min_p ? -1 : 0;
}

/// The errors a band for a target in direction `dir` draws from: every error, each taken
/// about the median of its own P's errors where that direction's bias is corrected.
std::vector<double> band_errors(const model_error& e, int dir) {
    const model_bias& b = dir > 0 ? e.above : e.below;
    if (dir == 0 || !b.corrected)
        return e.log_ratio;
    std::vector<double> out;
    for (int p : {e.min_p, e.max_p}) {
        std::vector<double> at = errors_at(e, p);
        const double centre = at.empty() ? 0 : median_inplace(at);
        for (double v : errors_at(e, p))
            out.push_back(v - centre);
    }
    for (std::size_t i = 0; i < e.log_ratio.size(); ++i) // P between the two ends
        if (e.at_p[i] != e.min_p && e.at_p[i] != e.max_p)
            out.push_back(e.log_ratio[i]);
    return out;
}

/// The devices whose speed-up per extra thread the fold leaving out P cannot identify: a
/// thread count the held-out cases ran that no remaining case of the device ran (on 2 cores,
/// P=1 runs 2 threads a rank and P=2 one). Those keep CALIB's: the fold then measures how the
/// rates carry across P, which is what a target needs, not the threads' model, which the whole
/// calibration fits (left free, the fold's error would be corrected as a trend in P).
std::map<std::string, double> unidentified_eta(const calibration_set& set,
                                               const std::vector<double>& cy, int p,
                                               const calibration& point) {
    std::set<std::pair<std::string, long>> kept, held;
    for (std::size_t i = 0; i < set.compute.size(); ++i) {
        const compute_obs& o = set.compute[i];
        if (!o.gpu && std::isfinite(cy[i]))
            (o.world_size == p ? held : kept).insert({o.device_key, std::lround(o.threads)});
    }
    std::map<std::string, double> out;
    for (const auto& [dev, threads] : held) {
        const auto eta = point.thread_efficiency.find(dev);
        if (!kept.count({dev, threads}) && eta != point.thread_efficiency.end())
            out[dev] = eta->second;
    }
    return out;
}

} // namespace

model_bias bias_of(const std::vector<double>& log_ratio, const std::string& what) {
    model_bias b;
    b.cases = log_ratio.size();
    if (log_ratio.empty())
        return b;
    std::vector<double> v = log_ratio;
    b.log_ratio = median_inplace(v);
    for (double r : log_ratio)
        b.same_side += (r > 0) == (b.log_ratio > 0) && r != 0;
    b.corrected = b.cases >= 3 && b.same_side >= 0.8 * static_cast<double>(b.cases) &&
                  std::fabs(b.log_ratio) > std::log(1.05);
    const double pct = 100 * std::expm1(std::fabs(b.log_ratio));
    b.text = fmt::format("{}: {:.0f}% {} ({} of {} cases){}", what, pct,
                         b.log_ratio > 0 ? "low" : "high", b.same_side, b.cases,
                         b.corrected ? ", consistent: corrected" : ", not consistent: kept");
    return b;
}

double model_error::correction(int p) const {
    const int dir = direction(*this, p);
    const model_bias& b = dir > 0 ? above : below;
    return dir != 0 && b.corrected ? b.log_ratio : 0.0;
}

double error_coverage(const model_error& err, double level) {
    if (err.log_ratio.empty())
        return unknown;
    std::size_t inside = 0;
    for (std::size_t i = 0; i < err.log_ratio.size(); ++i) {
        const int dir = err.at_p[i] == err.max_p ? 1 : err.at_p[i] == err.min_p ? -1 : 0;
        const model_bias& b = dir > 0 ? err.above : err.below;
        const double shift = dir != 0 && b.corrected ? b.log_ratio : 0.0;
        std::vector<double> pool = band_errors(err, dir);
        const interval band = percentile_interval(pool, level);
        inside += err.log_ratio[i] - shift >= band.lo && err.log_ratio[i] - shift <= band.hi;
    }
    return static_cast<double>(inside) / static_cast<double>(err.log_ratio.size());
}

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
    for (const compute_obs& o : set.compute)
        if (!o.gpu)
            e.min_share = std::min(e.min_share, o.share);
    if (!ps.empty()) {
        e.min_p = *ps.begin();
        e.max_p = *ps.rbegin();
    }
    if (ps.size() >= 2) {
        std::size_t held_eta = 0;
        for (int p : ps) {
            std::vector<double> held = cy;
            for (std::size_t i = 0; i < set.compute.size(); ++i)
                if (set.compute[i].world_size == p)
                    held[i] = unknown;
            const auto eta = unidentified_eta(set, cy, p, point);
            held_eta += !eta.empty();
            residuals_at(set, fit_calibration(set, held, ly, eta), p, e);
        }
        e.basis =
            fmt::format("leave-one-P-out over {} P, {} cases{}", ps.size(), e.log_ratio.size(),
                        held_eta ? fmt::format("; {} fold(s) with CALIB's speed-up per "
                                               "thread (their P alone ran its thread count)",
                                               held_eta)
                                 : "");
        e.above =
            bias_of(errors_at(e, e.max_p), fmt::format("predicting P={} from smaller P", e.max_p));
        e.below =
            bias_of(errors_at(e, e.min_p), fmt::format("predicting P={} from larger P", e.min_p));
    }
    if (e.log_ratio.empty()) {
        residuals_at(set, point, 0, e);
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
        const figures f = src.for_target(t, src.point);
        p.point = predict_target(t, f);
        if (!p.point.ok()) {
            const std::string unmeasured = "(no case in CALIB measures it;";
            if (const auto at = p.point.refusal.find(unmeasured);
                at != std::string::npos && !src.left_out.empty())
                p.point.refusal.replace(at, unmeasured.size(),
                                        "(no case left in CALIB measures it: " + src.left_out +
                                            ";");
            out.push_back(std::move(p));
            continue;
        }
        // A profile's figures are assumed, not fitted: CALIB's bias says nothing of them.
        const double shift = src.hardware ? 0.0 : err.correction(t.where.world);
        p.bias_correction = shift;
        p.point.time = p.point.time * std::exp(shift);
        const std::vector<double> pool = band_errors(err, direction(err, t.where.world));
        const double share = rank_share(t, f);
        p.unseen_sharing = !src.hardware && !f.gpu && !f.fixed_width && share < 1 &&
                           share < err.min_share * (1 - 1e-9);
        double mid = 0; // the second draw is taken about the pool's median
        if (p.unseen_sharing && !pool.empty()) {
            std::vector<double> sorted = pool;
            mid = median_inplace(sorted);
        }
        std::vector<double> v;
        for (std::size_t b = 0; b < reps; ++b) {
            double base = p.point.time.total();
            if (!src.hardware && src.replicates && !src.replicates->empty()) {
                const step_prediction r =
                    predict_target(t, src.for_target(t, &(*src.replicates)[b]));
                base = r.ok() ? r.time.total() * std::exp(shift) : unknown;
            }
            double e = pool.empty() ? 0 : pool[rng.index(pool.size())];
            if (p.unseen_sharing && !pool.empty())
                e += unseen_sharing_scale * (pool[rng.index(pool.size())] - mid);
            if (std::isfinite(base))
                v.push_back(base * std::exp(e));
        }
        if (!src.hardware && t.job == "collectives") {
            p.band_note = "band not calibrated: no held-out error of the link figures";
        } else if (!v.empty()) {
            const interval band = percentile_interval(v, level);
            p.lo = band.lo / src.mark_factor;
            p.hi = band.hi * src.mark_factor;
        }
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace ringscale::analysis::predict
