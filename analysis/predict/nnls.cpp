#include "nnls.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace ringscale::analysis::predict {

namespace {

/// sum_i |log(y_i / x_i . c)|; infinity when a row predicts no time.
double log_loss(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                const std::vector<double>& c) {
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double p = 0;
        for (std::size_t j = 0; j < c.size(); ++j)
            if (std::isfinite(c[j]))
                p += x[i][j] * c[j];
        if (!(p > 0))
            return std::numeric_limits<double>::infinity();
        sum += std::abs(std::log(y[i] / p));
    }
    return sum;
}

} // namespace

std::vector<double> nnls(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                         const std::vector<double>& w) {
    const std::size_t n = x.empty() ? 0 : x.front().size();
    std::vector<std::size_t> live; // identified columns
    std::vector<double> scale(n, 0);
    for (std::size_t j = 0; j < n; ++j) {
        for (const auto& row : x)
            scale[j] = std::max(scale[j], std::abs(row[j]));
        if (scale[j] > 0)
            live.push_back(j);
    }
    std::vector<double> best(n, std::nan(""));
    for (std::size_t j : live)
        best[j] = 0;
    double best_rss = std::numeric_limits<double>::infinity();
    for (std::size_t mask = 0; mask < (std::size_t{1} << live.size()); ++mask) {
        std::vector<std::size_t> cols;
        for (std::size_t b = 0; b < live.size(); ++b)
            if (mask >> b & 1)
                cols.push_back(live[b]);
        const auto rows = static_cast<Eigen::Index>(y.size());
        Eigen::MatrixXd a(rows, static_cast<Eigen::Index>(cols.size()));
        Eigen::VectorXd rhs(rows);
        for (Eigen::Index i = 0; i < rows; ++i) {
            const auto ui = static_cast<std::size_t>(i);
            for (std::size_t k = 0; k < cols.size(); ++k) // columns scaled to max |x| = 1
                a(i, static_cast<Eigen::Index>(k)) = w[ui] * x[ui][cols[k]] / scale[cols[k]];
            rhs(i) = w[ui] * y[ui];
        }
        Eigen::VectorXd c = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(cols.size()));
        if (!cols.empty())
            c = a.colPivHouseholderQr().solve(rhs);
        if ((c.array() < 0).any() || !c.allFinite())
            continue;
        const double rss = (a * c - rhs).squaredNorm();
        if (rss < best_rss * (1 - 1e-12)) { // ties keep the smaller active set
            best_rss = rss;
            for (std::size_t j : live)
                best[j] = 0;
            for (std::size_t k = 0; k < cols.size(); ++k)
                best[cols[k]] = c(static_cast<Eigen::Index>(k)) / scale[cols[k]];
        }
    }
    return best;
}

std::vector<double> nnls_log(const std::vector<std::vector<double>>& x,
                             const std::vector<double>& y, const std::vector<double>& start) {
    std::vector<double> c = start;
    double loss = log_loss(x, y, c);
    if (!std::isfinite(loss))
        return start;
    for (int it = 0; it < 50; ++it) {
        // log(x.c') ~ log p + x.c'/p - 1 at p = x.c: solve x.c'/p = 1 + log(y/p), c' >= 0,
        // each row weighted by 1 / |its log ratio| (iteratively reweighted: absolute values).
        std::vector<std::vector<double>> xs(x.size());
        std::vector<double> ys(y.size()), w(y.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            double p = 0;
            for (std::size_t j = 0; j < c.size(); ++j)
                if (std::isfinite(c[j]))
                    p += x[i][j] * c[j];
            for (double v : x[i])
                xs[i].push_back(v / p);
            ys[i] = 1 + std::log(y[i] / p);
            w[i] = 1 / std::sqrt(std::max(std::abs(ys[i] - 1), 1e-6));
        }
        const std::vector<double> target = nnls(xs, ys, w);
        bool improved = false;
        for (double step = 1; step > 1e-3 && !improved; step /= 2) {
            std::vector<double> next = c;
            for (std::size_t j = 0; j < c.size(); ++j)
                if (std::isfinite(c[j]) && std::isfinite(target[j]))
                    next[j] = c[j] + step * (target[j] - c[j]);
            const double l = log_loss(x, y, next);
            if (l < loss * (1 - 1e-9)) {
                improved = true;
                c = next;
                loss = l;
            }
        }
        if (!improved)
            break;
    }
    return c;
}

} // namespace ringscale::analysis::predict
