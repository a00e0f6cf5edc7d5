// Seeded, platform-independent resampling: a splitmix64 generator (the standard library's
// distributions are implementation-defined, so results would differ between compilers),
// bootstrap replicates of a statistic and percentile intervals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace ringscale::analysis {

/// splitmix64 (Steele, Lea & Flood 2014): tiny, fast, and identical on every platform.
class splitmix64 {
  public:
    explicit splitmix64(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next();
    /// Uniform index in [0, n) by multiply-shift (bias below 2^-40 for n < 2^24).
    std::size_t index(std::size_t n) {
        return static_cast<std::size_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
    }

  private:
    std::uint64_t m_state;
};

/// Fill `out` (resized to `in.size()`) with a resample of `in` drawn with replacement.
void resample(const std::vector<double>& in, std::vector<double>& out, splitmix64& rng);

/// Median of a sample in linear time (reorders `values`); NaN when empty.
double median_inplace(std::vector<double>& values);

/// Percentile interval [q(alpha/2), q(1 - alpha/2)] of bootstrap replicates (type 7).
struct interval {
    double lo;
    double hi;
};
interval percentile_interval(std::vector<double> replicates, double level = 0.95);

/// Percentile-bootstrap CI of stat(a, b) for two independent samples resampled separately
/// (B replicates, fixed seed); used for ratios of medians such as speedup.
interval bootstrap_two_sample(const std::vector<double>& a, const std::vector<double>& b,
                              const std::function<double(double, double)>& combine,
                              std::size_t replicates, std::uint64_t seed, double level = 0.95);

} // namespace ringscale::analysis
