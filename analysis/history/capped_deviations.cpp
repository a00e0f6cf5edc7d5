#include "capped_deviations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace ringscale::analysis::history {

namespace {

/// The launches inserted so far, by their place in the sorted values `s`, in four regions:
/// below the median less the cap, from there to the median (inclusive), above it up to the
/// median plus the cap, and beyond. Each region keeps its count and sum, so the capped cost
/// about the median is O(1); inserting a launch moves the median by at most one inserted
/// place and the cap's bounds with it, each launch they pass changing region.
class sweep {
  public:
    sweep(const std::vector<double>& s, double cap) : s_(s), cap_(cap), in_(s.size(), 0) {}

    /// Inserts the launch at sorted place r (each place once).
    void insert(std::size_t r) {
        in_[r] = 1;
        const int region = (r >= bound_[0]) + (r >= bound_[1]) + (r >= bound_[2]);
        ++count_[region];
        sum_[region] += s_[r];
        if (++inserted_ == 1) {
            med_ = r;
            bound_[0] = r, bound_[1] = bound_[2] = r + 1;
            count_[region] = 0, sum_[region] = 0, count_[1] = 1, sum_[1] = s_[r];
            recentre();
            return;
        }
        below_ += r < med_;
        const std::size_t target = (inserted_ - 1) / 2; // the lower median: sorted[(k - 1) / 2]
        if (below_ == target)
            return;
        if (below_ > target) {
            do
                --med_;
            while (!in_[med_]);
            --below_;
        } else {
            do
                ++med_;
            while (!in_[med_]);
            ++below_;
        }
        recentre();
    }

    /// The capped cost of the launches inserted so far about their lower median.
    double cost() const {
        const double c = s_[med_];
        double out = 0.1 * (c * count_[0] - sum_[0]) + 1.1 * (c * count_[1] - sum_[1]) +
                     1.1 * (sum_[2] - c * count_[2]) + 0.1 * (sum_[3] - c * count_[3]);
        if (count_[0] + count_[3] > 0) // (the cap is infinite when the values do not vary)
            out += cap_ * (count_[0] + count_[3]);
        return out;
    }

  private:
    /// Moves boundary i (between regions i and i + 1) to place p.
    void move(int i, std::size_t p) {
        while (bound_[i] > p)
            if (in_[--bound_[i]])
                transfer(bound_[i], i, i + 1);
        for (; bound_[i] < p; ++bound_[i])
            if (in_[bound_[i]])
                transfer(bound_[i], i + 1, i);
    }

    void transfer(std::size_t j, int from, int to) {
        --count_[from], sum_[from] -= s_[j];
        ++count_[to], sum_[to] += s_[j];
    }

    /// The bounds after the median moved: the first place at or above median - cap, the
    /// median's next place, and the first place above median + cap (in that order when the
    /// median moved down, the reverse when up, so the regions never cross).
    void recentre() {
        const double c = s_[med_];
        const std::size_t n = s_.size();
        std::size_t lo = bound_[0], hi = bound_[2];
        while (lo > 0 && s_[lo - 1] >= c - cap_)
            --lo;
        while (lo < n && s_[lo] < c - cap_)
            ++lo;
        while (hi < n && s_[hi] <= c + cap_)
            ++hi;
        while (hi > 0 && s_[hi - 1] > c + cap_)
            --hi;
        if (med_ + 1 <= bound_[1]) {
            move(0, lo), move(1, med_ + 1), move(2, hi);
        } else {
            move(2, hi), move(1, med_ + 1), move(0, lo);
        }
    }

    const std::vector<double>& s_;
    double cap_;
    std::vector<char> in_;
    std::size_t bound_[3] = {0, 0, 0}, med_ = 0, below_ = 0, inserted_ = 0;
    double count_[4] = {0, 0, 0, 0}, sum_[4] = {0, 0, 0, 0};
};

/// Each launch's place in y's ascending `order` and the sorted values less their middle one
/// (the costs do not change with a shift; the sums stay small).
std::pair<std::vector<std::size_t>, std::vector<double>>
places(const std::vector<double>& y, const std::vector<std::size_t>& order) {
    std::vector<std::size_t> place(y.size());
    std::vector<double> s(y.size());
    const double mid = y.empty() ? 0 : y[order[y.size() / 2]];
    for (std::size_t j = 0; j < y.size(); ++j) {
        place[order[j]] = j;
        s[j] = y[order[j]] - mid;
    }
    return {std::move(place), std::move(s)};
}

/// The costs of y's prefixes (forward) or suffixes (backward, element k - 1: the last k).
std::vector<double> side_costs(const std::vector<std::size_t>& place, const std::vector<double>& s,
                               double cap, bool backward) {
    const std::size_t n = place.size();
    sweep sw(s, cap);
    std::vector<double> out(n);
    for (std::size_t k = 0; k < n; ++k) {
        sw.insert(place[backward ? n - 1 - k : k]);
        out[k] = sw.cost();
    }
    return out;
}

} // namespace

std::vector<std::size_t> ascending(const std::vector<double>& y) {
    std::vector<std::size_t> order(y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return y[a] < y[b] || (y[a] == y[b] && a < b); });
    return order;
}

void permuted(const std::vector<double>& r, const std::vector<std::size_t>& r_order,
              const std::vector<std::size_t>& perm, std::size_t from, double shift,
              std::vector<double>& z, std::vector<std::size_t>& order) {
    const std::size_t n = r.size();
    std::vector<std::size_t> at(n), before, after; // at: where each of r's values went
    z.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        at[perm[i]] = i;
        z[i] = r[perm[i]] + (i >= from ? shift : 0);
    }
    for (const std::size_t e : r_order) // each side's positions in ascending order
        (at[e] < from ? before : after).push_back(at[e]);
    order.resize(n);
    std::merge(before.begin(), before.end(), after.begin(), after.end(), order.begin(),
               [&](std::size_t a, std::size_t b) { return z[a] < z[b]; });
}

std::vector<double> prefix_capped_costs(const std::vector<double>& y, double cap) {
    const auto [place, s] = places(y, ascending(y));
    return side_costs(place, s, cap, false);
}

std::vector<double> capped_statistics(const std::vector<double>& y,
                                      const std::vector<std::size_t>& order, double cap,
                                      std::size_t m) {
    const std::size_t n = y.size();
    std::vector<double> q(n > 0 ? n - 1 : 0, 0); // only m <= tau <= n - m: the splits used
    if (n < 2)
        return q;
    const auto [place, s] = places(y, order);
    const std::vector<double> left = side_costs(place, s, cap, false);
    const std::vector<double> right = side_costs(place, s, cap, true);
    for (std::size_t tau = std::max<std::size_t>(m, 1); tau + m <= n && tau < n; ++tau)
        q[tau - 1] = left[n - 1] - left[tau - 1] - right[n - tau - 1];
    return q;
}

std::vector<double> capped_statistics(const std::vector<double>& y, double cap, std::size_t m) {
    return capped_statistics(y, ascending(y), cap, m);
}

double noise_cap(const std::vector<double>& y) {
    std::vector<double> d;
    for (std::size_t i = 1; i < y.size(); ++i)
        d.push_back(std::abs(y[i] - y[i - 1]));
    double med = 0;
    if (!d.empty()) { // the median as analysis::median has it, by selection
        const double h = (static_cast<double>(d.size()) - 1) / 2;
        const auto lo = static_cast<std::size_t>(h);
        std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(lo), d.end());
        const double a = d[lo];
        const double b =
            lo + 1 < d.size()
                ? *std::min_element(d.begin() + static_cast<std::ptrdiff_t>(lo + 1), d.end())
                : a;
        med = a + (h - static_cast<double>(lo)) * (b - a);
    }
    const double noise = 1.4826 * med / std::sqrt(2.0);
    return noise > 0 ? 3 * noise : std::numeric_limits<double>::infinity();
}

} // namespace ringscale::analysis::history
