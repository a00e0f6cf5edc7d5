#include "robust_levels.hpp"

#include "analysis/statistics/descriptive.hpp"

#include <algorithm>
#include <cmath>

namespace ringscale::analysis::history {

double median_of(const std::vector<double>& x, std::size_t a, std::size_t b) {
    return median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(a),
                                      x.begin() + static_cast<std::ptrdiff_t>(b)));
}

std::vector<double> running_median(const std::vector<double>& y, std::size_t half) {
    std::vector<double> out(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) {
        const std::size_t lo = i >= half ? i - half : 0, hi = std::min(y.size(), i + half + 1);
        out[i] = median_of(y, lo, hi);
    }
    return out;
}

std::vector<double> cleaned(std::vector<double> y, std::size_t m) {
    std::vector<double> d, r;
    for (std::size_t i = 1; i < y.size(); ++i)
        d.push_back(std::abs(y[i] - y[i - 1]));
    const double center = median(y);
    const std::vector<double> local = running_median(y, 4);
    for (std::size_t i = 0; i < y.size(); ++i)
        r.push_back(std::abs(y[i] - local[i]));
    const double sigma = std::max(d.empty() ? 0 : 1.4826 * median(d) / std::sqrt(2.0),
                                  r.empty() ? 0 : 1.4826 * median(r));
    std::vector<int> side(y.size(), 0);
    for (std::size_t i = 0; i < y.size() && sigma > 0; ++i)
        side[i] = y[i] > local[i] + 3 * sigma ? 1 : y[i] < local[i] - 3 * sigma ? -1 : 0;
    for (std::size_t i = 0, j = 0; i < y.size(); i = j) {
        for (j = i + 1; j < y.size() && side[j] == side[i];)
            ++j;
        if (side[i] != 0 && j - i >= m)
            std::fill(side.begin() + static_cast<std::ptrdiff_t>(i),
                      side.begin() + static_cast<std::ptrdiff_t>(j), 0);
    }
    for (std::size_t i = 0; i < y.size(); ++i)
        y[i] = ((side[i] != 0 ? local[i] : y[i]) - center) / (sigma > 0 ? sigma : 1);
    return y;
}

} // namespace ringscale::analysis::history
