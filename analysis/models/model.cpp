#include "model.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "src/base/error.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace ringscale::analysis {

namespace {

double term(const hypothesis& h, double p) {
    if (h.constant)
        return 0;
    return std::pow(p, h.exponent) * std::pow(std::log2(p), h.log_power);
}

/// Coefficients (c0, c1) of the least-squares fit; c1 = 0 for the constant model.
std::pair<double, double> solve(const hypothesis& h, const std::vector<double>& p,
                                const std::vector<double>& t) {
    const auto n = static_cast<Eigen::Index>(p.size());
    if (h.constant) {
        double s = 0;
        for (double v : t)
            s += v;
        return {s / static_cast<double>(n), 0.0};
    }
    Eigen::MatrixXd a(n, 2);
    Eigen::VectorXd b(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        a(i, 0) = 1.0;
        a(i, 1) = term(h, p[static_cast<std::size_t>(i)]);
        b(i) = t[static_cast<std::size_t>(i)];
    }
    const Eigen::VectorXd c = a.colPivHouseholderQr().solve(b);
    return {c(0), c(1)};
}

} // namespace

double smape(const std::vector<double>& actual, const std::vector<double>& predicted) {
    double s = 0;
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double denom = std::abs(actual[i]) + std::abs(predicted[i]);
        s += denom > 0 ? 2.0 * std::abs(predicted[i] - actual[i]) / denom : 0.0;
    }
    return 100.0 * s / static_cast<double>(actual.size());
}

std::vector<hypothesis> hypothesis_set() {
    std::vector<hypothesis> out;
    out.push_back({0, 0, true, "0"});
    const std::pair<double, const char*> positive[] = {
        {0, "0"},         {0.25, "1/4"},    {1.0 / 3, "1/3"}, {0.5, "1/2"},     {2.0 / 3, "2/3"},
        {0.75, "3/4"},    {1, "1"},         {1.25, "5/4"},    {4.0 / 3, "4/3"}, {1.5, "3/2"},
        {5.0 / 3, "5/3"}, {1.75, "7/4"},    {2, "2"},         {2.25, "9/4"},    {7.0 / 3, "7/3"},
        {2.5, "5/2"},     {8.0 / 3, "8/3"}, {2.75, "11/4"},   {3, "3"}};
    for (const auto& [e, text] : positive)
        for (int k = 0; k <= 2; ++k)
            if (e != 0 || k != 0) // p^0 log^0 is the constant model
                out.push_back({e, k, false, text});
    const std::pair<double, const char*> negative[] = {{-1, "-1"},         {-0.75, "-3/4"},
                                                       {-2.0 / 3, "-2/3"}, {-0.5, "-1/2"},
                                                       {-1.0 / 3, "-1/3"}, {-0.25, "-1/4"}};
    for (const auto& [e, text] : negative)
        for (int k = 0; k <= 1; ++k)
            out.push_back({e, k, false, text});
    return out;
}

double model_fit::eval(double p) const {
    return c0 + c1 * term(h, p);
}

std::string model_fit::formula() const {
    std::string s = fmt::format("{:.4e}", c0);
    if (h.constant)
        return s;
    s += fmt::format(" {} {:.4e}", c1 < 0 ? '-' : '+', std::abs(c1));
    if (h.exponent != 0)
        s += h.exponent == 1 ? " * p" : fmt::format(" * p^({})", h.exponent_text);
    if (h.log_power == 1)
        s += " * log2(p)";
    else if (h.log_power > 1)
        s += fmt::format(" * log2(p)^{}", h.log_power);
    return s;
}

model_fit fit_hypothesis(const hypothesis& h, const std::vector<double>& p,
                         const std::vector<double>& t) {
    model_fit f;
    f.h = h;
    std::tie(f.c0, f.c1) = solve(h, p, t);
    std::vector<double> pred(p.size());
    double mean_t = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        pred[i] = f.eval(p[i]);
        mean_t += t[i] / static_cast<double>(t.size());
    }
    double rss = 0, tss = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        rss += (t[i] - pred[i]) * (t[i] - pred[i]);
        tss += (t[i] - mean_t) * (t[i] - mean_t);
    }
    f.r2 = tss > 0 ? 1.0 - rss / tss : 1.0;
    f.smape = smape(t, pred);
    return f;
}

double loo_smape(const hypothesis& h, const std::vector<double>& p, const std::vector<double>& t) {
    std::vector<double> held(p.size());
    std::vector<double> sp, st;
    for (std::size_t i = 0; i < p.size(); ++i) {
        sp.clear();
        st.clear();
        for (std::size_t j = 0; j < p.size(); ++j)
            if (j != i) {
                sp.push_back(p[j]);
                st.push_back(t[j]);
            }
        const auto [c0, c1] = solve(h, sp, st);
        held[i] = c0 + c1 * term(h, p[i]);
    }
    return smape(t, held);
}

bool plausible(const model_fit& f, double min_elasticity) {
    double prev_t = f.eval(1), prev_p = 1;
    if (!(prev_t > 0) || !std::isfinite(prev_t))
        return false;
    for (int i = 1; i <= 96; ++i) {
        const double p = std::exp2(i * 0.25), t = f.eval(p);
        if (!(t > 0) || !std::isfinite(t))
            return false;
        if (std::log(t / prev_t) / std::log(p / prev_p) < min_elasticity - 1e-6)
            return false;
        prev_t = t;
        prev_p = p;
    }
    return true;
}

model_fit select_model(const std::vector<double>& p, const std::vector<double>& t,
                       double min_elasticity) {
    const std::set<double> distinct(p.begin(), p.end());
    if (distinct.size() < 3)
        throw config_error(
            fmt::format("cannot fit a model to {} distinct P (need at least 3)", distinct.size()));
    model_fit best;
    double best_cv = std::numeric_limits<double>::infinity();
    for (const hypothesis& h : hypothesis_set()) {
        const double cv = loo_smape(h, p, t);
        if (cv < best_cv - 1e-9) { // strictly better: ties keep the simpler, earlier one
            model_fit f = fit_hypothesis(h, p, t);
            if (!h.constant && !plausible(f, min_elasticity))
                continue;
            best_cv = cv;
            best = f;
            best.cv_smape = cv;
        }
    }
    return best;
}

std::string extrapolation_refusal(const std::vector<double>& p, double at) {
    const double lo = *std::min_element(p.begin(), p.end());
    const double hi = *std::max_element(p.begin(), p.end());
    const double limit = hi * (hi / lo);
    if (at < 1)
        return fmt::format("P={:g} is below 1", at);
    if (at > limit * (1 + 1e-9))
        return fmt::format("not predicted: P={:g} is {:g}x beyond the largest measured P; the "
                           "data (P={:g}..{:g}) supports extrapolation to P={:g}",
                           at, at / hi, lo, hi, limit);
    return "";
}

std::vector<prediction> predict_with_band(const std::vector<double>& p,
                                          const std::vector<std::vector<double>>& samples,
                                          const model_fit& chosen, const std::vector<double>& at,
                                          std::size_t replicates, std::uint64_t seed, double level,
                                          double min_elasticity) {
    splitmix64 rng(seed);
    std::vector<std::vector<double>> preds(at.size());
    std::vector<double> t(p.size());
    std::vector<double> buf;
    for (std::size_t b = 0; b < replicates; ++b) {
        for (std::size_t i = 0; i < p.size(); ++i) {
            resample(samples[i], buf, rng);
            t[i] = median_inplace(buf);
        }
        const model_fit refit = select_model(p, t, min_elasticity);
        for (std::size_t j = 0; j < at.size(); ++j)
            preds[j].push_back(refit.eval(at[j]));
    }
    std::vector<prediction> out;
    for (std::size_t j = 0; j < at.size(); ++j) {
        const std::string why = extrapolation_refusal(p, at[j]);
        if (!why.empty()) {
            const double nan = std::numeric_limits<double>::quiet_NaN();
            out.push_back({at[j], nan, nan, nan, why});
            continue;
        }
        const interval band = replicates > 0 ? percentile_interval(preds[j], level)
                                             : interval{chosen.eval(at[j]), chosen.eval(at[j])};
        out.push_back({at[j], chosen.eval(at[j]), band.lo, band.hi, ""});
    }
    return out;
}

} // namespace ringscale::analysis
