#include "model_multi.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "model.hpp"
#include "src/base/error.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace ringscale::analysis {

namespace {

double factor_value(const factor& f, double x) {
    double v = f.exponent == 0 ? 1.0 : std::pow(x, f.exponent);
    if (f.log_power > 0)
        v *= std::pow(std::log2(x), f.log_power);
    return v;
}

std::string factor_text(const factor& f, const char* name) {
    std::string s;
    if (f.exponent != 0)
        s = f.exponent == 1 ? name : fmt::format("{}^({})", name, f.exponent_text);
    if (f.log_power > 0) {
        if (!s.empty())
            s += " * ";
        s += f.log_power == 1 ? fmt::format("log2({})", name)
                              : fmt::format("log2({})^{}", name, f.log_power);
    }
    return s;
}

std::vector<factor> factors(const std::vector<std::pair<double, const char*>>& exponents) {
    std::vector<factor> out;
    for (const auto& [e, text] : exponents)
        for (int k = 0; k <= 1; ++k)
            out.push_back({e, k, text});
    return out;
}

/// The design matrix's columns: one per term of the whole set, each scaled to max |x| = 1.
struct design {
    Eigen::MatrixXd columns; ///< [points, terms]
    Eigen::VectorXd scale;   ///< what each column was divided by
};

design make_design(const std::vector<multi_term>& terms, const std::vector<point2>& pts) {
    design d;
    const auto n = static_cast<Eigen::Index>(pts.size());
    const auto m = static_cast<Eigen::Index>(terms.size());
    d.columns.resize(n, m);
    d.scale.resize(m);
    for (Eigen::Index j = 0; j < m; ++j) {
        for (Eigen::Index i = 0; i < n; ++i)
            d.columns(i, j) = terms[static_cast<std::size_t>(j)].eval(
                pts[static_cast<std::size_t>(i)].p, pts[static_cast<std::size_t>(i)].s);
        const double mx = d.columns.col(j).cwiseAbs().maxCoeff();
        d.scale(j) = mx > 0 ? mx : 1.0;
        d.columns.col(j) /= d.scale(j);
    }
    return d;
}

/// Least squares on the chosen columns (a constant first); rows where `skip` is set are left
/// out. Returns coefficients in the scaled basis.
Eigen::VectorXd solve(const design& d, const std::vector<Eigen::Index>& cols,
                      const Eigen::VectorXd& t, Eigen::Index skip = -1) {
    const Eigen::Index n = t.size() - (skip >= 0 ? 1 : 0);
    const auto k = static_cast<Eigen::Index>(cols.size()) + 1;
    Eigen::MatrixXd a(n, k);
    Eigen::VectorXd b(n);
    for (Eigen::Index i = 0, r = 0; i < t.size(); ++i) {
        if (i == skip)
            continue;
        a(r, 0) = 1.0;
        for (Eigen::Index j = 1; j < k; ++j)
            a(r, j) = d.columns(i, cols[static_cast<std::size_t>(j - 1)]);
        b(r++) = t(i);
    }
    return a.colPivHouseholderQr().solve(b);
}

double predict_row(const design& d, const std::vector<Eigen::Index>& cols, const Eigen::VectorXd& c,
                   Eigen::Index i) {
    double v = c(0);
    for (std::size_t j = 0; j < cols.size(); ++j)
        v += c(static_cast<Eigen::Index>(j) + 1) * d.columns(i, cols[j]);
    return v;
}

double loo(const design& d, const std::vector<Eigen::Index>& cols, const Eigen::VectorXd& t) {
    std::vector<double> held(static_cast<std::size_t>(t.size())), actual(held.size());
    for (Eigen::Index i = 0; i < t.size(); ++i) {
        held[static_cast<std::size_t>(i)] = predict_row(d, cols, solve(d, cols, t, i), i);
        actual[static_cast<std::size_t>(i)] = t(i);
    }
    return smape(actual, held);
}

/// Every subset of `m` term indices with at most `max_terms` members, smallest first.
std::vector<std::vector<Eigen::Index>> subsets(Eigen::Index m, int max_terms) {
    std::vector<std::vector<Eigen::Index>> out{{}};
    for (Eigen::Index a = 0; max_terms >= 1 && a < m; ++a)
        out.push_back({a});
    for (Eigen::Index a = 0; max_terms >= 2 && a < m; ++a)
        for (Eigen::Index b = a + 1; b < m; ++b)
            out.push_back({a, b});
    return out;
}

void check_points(const std::vector<point2>& pts, const std::vector<double>& t) {
    std::set<double> ps, ss;
    for (const point2& x : pts) {
        ps.insert(x.p);
        ss.insert(x.s);
    }
    if (ps.size() < 3 || ss.size() < 3 || pts.size() < 6 || pts.size() != t.size())
        throw config_error(fmt::format("cannot fit a model of p and S to {} point(s) with {} "
                                       "distinct P and {} distinct S (need 3 of each, 6 points)",
                                       pts.size(), ps.size(), ss.size()));
}

} // namespace

double multi_term::eval(double pv, double sv) const {
    return factor_value(p, pv) * factor_value(s, sv);
}

std::string multi_term::text() const {
    const std::string a = factor_text(s, "S"), b = factor_text(p, "p");
    return a.empty() ? b : b.empty() ? a : a + " * " + b;
}

std::vector<multi_term> multi_term_set() {
    const auto p =
        factors({{-1, "-1"}, {-0.5, "-1/2"}, {0, "0"}, {0.5, "1/2"}, {1, "1"}, {2, "2"}});
    const auto s = factors({{0, "0"}, {0.5, "1/2"}, {1, "1"}, {1.5, "3/2"}, {2, "2"}, {3, "3"}});
    std::vector<multi_term> out;
    for (const factor& fs : s)
        for (const factor& fp : p)
            if (!fs.is_one() || !fp.is_one())
                out.push_back({fp, fs});
    return out;
}

double multi_model::eval(double p, double s) const {
    double v = coef.empty() ? 0.0 : coef[0];
    for (std::size_t k = 0; k < terms.size(); ++k)
        v += coef[k + 1] * terms[k].eval(p, s);
    return v;
}

std::string multi_model::formula() const {
    std::string out = fmt::format("{:.4e}", coef.empty() ? 0.0 : coef[0]);
    for (std::size_t k = 0; k < terms.size(); ++k)
        out += fmt::format(" {} {:.4e} * {}", coef[k + 1] < 0 ? '-' : '+', std::abs(coef[k + 1]),
                           terms[k].text());
    return out;
}

multi_model fit_multi(const std::vector<multi_term>& terms, const std::vector<point2>& pts,
                      const std::vector<double>& t) {
    const design d = make_design(terms, pts);
    const Eigen::VectorXd tv = Eigen::Map<const Eigen::VectorXd>(t.data(), t.size());
    std::vector<Eigen::Index> cols;
    for (std::size_t j = 0; j < terms.size(); ++j)
        cols.push_back(static_cast<Eigen::Index>(j));
    const Eigen::VectorXd c = solve(d, cols, tv);
    multi_model m;
    m.terms = terms;
    m.coef.push_back(c(0));
    for (std::size_t j = 0; j < cols.size(); ++j)
        m.coef.push_back(c(static_cast<Eigen::Index>(j) + 1) / d.scale(cols[j]));
    std::vector<double> pred(t.size());
    double mean = 0, rss = 0, tss = 0;
    for (double v : t)
        mean += v / static_cast<double>(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        pred[i] = m.eval(pts[i].p, pts[i].s);
        rss += (t[i] - pred[i]) * (t[i] - pred[i]);
        tss += (t[i] - mean) * (t[i] - mean);
    }
    m.r2 = tss > 0 ? 1.0 - rss / tss : 1.0;
    m.smape = smape(t, pred);
    return m;
}

bool plausible(const multi_model& m, const std::vector<point2>& pts) {
    double s_lo = pts.front().s, s_hi = pts.front().s;
    for (const point2& x : pts) {
        s_lo = std::min(s_lo, x.s);
        s_hi = std::max(s_hi, x.s);
    }
    const double from = std::log2(s_lo) - 1, to = std::log2(s_hi) + 12;
    for (double ls = from; ls <= to + 1e-9; ls += 0.5)
        for (double lp = 0; lp <= 24 + 1e-9; lp += 0.5) {
            const double s = std::exp2(ls), p = std::exp2(lp), t = m.eval(p, s);
            if (!(t > 0) || !std::isfinite(t))
                return false;
            const double tp = m.eval(p * std::sqrt(2.0), s), ts = m.eval(p, s * std::sqrt(2.0));
            if (std::log(tp / t) / std::log(std::sqrt(2.0)) < strong_elasticity - 1e-6 ||
                !(ts >= t * (1 - 1e-9)))
                return false;
        }
    return true;
}

multi_model select_multi_model(const std::vector<point2>& pts, const std::vector<double>& t,
                               int max_terms) {
    check_points(pts, t);
    const std::vector<multi_term> all = multi_term_set();
    const design d = make_design(all, pts);
    const Eigen::VectorXd tv = Eigen::Map<const Eigen::VectorXd>(t.data(), t.size());
    // A hypothesis needs fewer coefficients than points left after holding one out.
    const int usable = std::min(max_terms, static_cast<int>(pts.size()) - 3);
    std::vector<Eigen::Index> best;
    double best_cv = std::numeric_limits<double>::infinity();
    for (const auto& cols : subsets(static_cast<Eigen::Index>(all.size()), usable)) {
        const double cv = loo(d, cols, tv);
        // Strictly better by a margin: ties keep the simpler, earlier hypothesis.
        if (cv < best_cv * (1 - 1e-6) - 1e-9) {
            std::vector<multi_term> terms;
            for (Eigen::Index j : cols)
                terms.push_back(all[static_cast<std::size_t>(j)]);
            if (!cols.empty() && !plausible(fit_multi(terms, pts, t), pts))
                continue;
            best_cv = cv;
            best = cols;
        }
    }
    std::vector<multi_term> terms;
    for (Eigen::Index j : best)
        terms.push_back(all[static_cast<std::size_t>(j)]);
    multi_model m = fit_multi(terms, pts, t);
    m.cv_smape = best_cv;
    return m;
}

std::vector<multi_prediction> predict_multi(const std::vector<point2>& pts,
                                            const std::vector<std::vector<double>>& samples,
                                            const multi_model& chosen,
                                            const std::vector<point2>& at, std::size_t replicates,
                                            std::uint64_t seed, double level) {
    splitmix64 rng(seed);
    std::vector<std::vector<double>> preds(at.size());
    std::vector<double> t(pts.size()), buf;
    for (std::size_t b = 0; b < replicates; ++b) {
        for (std::size_t i = 0; i < pts.size(); ++i) {
            resample(samples[i], buf, rng);
            t[i] = median_inplace(buf);
        }
        const multi_model refit = fit_multi(chosen.terms, pts, t);
        if (!chosen.terms.empty() && !plausible(refit, pts))
            continue; // a resample the chosen terms cannot fit plausibly: left out of the band
        for (std::size_t j = 0; j < at.size(); ++j)
            preds[j].push_back(refit.eval(at[j].p, at[j].s));
    }
    std::vector<double> ps, ss;
    for (const point2& x : pts) {
        ps.push_back(x.p);
        ss.push_back(x.s);
    }
    std::vector<multi_prediction> out;
    for (std::size_t j = 0; j < at.size(); ++j) {
        multi_prediction pr{at[j].p, at[j].s, 0, 0, 0, extrapolation_refusal(ps, at[j].p)};
        if (pr.refusal.empty() && !extrapolation_refusal(ss, at[j].s).empty())
            pr.refusal = fmt::format("not predicted: S={:g} is {:g}x beyond the largest measured "
                                     "S; the data supports extrapolation to S={:g}",
                                     at[j].s, at[j].s / *std::max_element(ss.begin(), ss.end()),
                                     *std::max_element(ss.begin(), ss.end()) *
                                         *std::max_element(ss.begin(), ss.end()) /
                                         *std::min_element(ss.begin(), ss.end()));
        if (!pr.refusal.empty() || (replicates > 0 && preds[j].size() < replicates / 2)) {
            if (pr.refusal.empty())
                pr.refusal = "not predicted: most bootstrap refits are not plausible";
            pr.value = pr.lo = pr.hi = std::numeric_limits<double>::quiet_NaN();
            out.push_back(pr);
            continue;
        }
        pr.value = chosen.eval(at[j].p, at[j].s);
        const interval band =
            replicates > 0 ? percentile_interval(preds[j], level) : interval{pr.value, pr.value};
        pr.lo = band.lo;
        pr.hi = band.hi;
        out.push_back(pr);
    }
    return out;
}

} // namespace ringscale::analysis
