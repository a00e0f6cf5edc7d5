// Scaling analysis of one family: speedup and efficiency against a stated base case with
// bootstrap CIs, and the Karp-Flatt experimentally determined serial fraction.
#pragma once

#include "analysis/cases/cases.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis {

struct scaling_options {
    std::optional<int> base_p;     ///< base case's P; smallest P of each family when unset
    std::size_t replicates = 2000; ///< bootstrap replicates
    std::uint64_t seed = 1;
    double level = 0.95;
    /// Two-level bootstrap (launches, then iterations; see hierarchical.hpp) when both cases
    /// have at least this many launches (>= 2); otherwise iterations only, and the CIs say
    /// nothing about launch-to-launch noise.
    std::size_t min_launches = 2;
};

/// One P of a family, relative to the base case. Ratios are NaN where undefined.
struct scaling_point {
    const pooled_case* source = nullptr;
    int p = 0;
    double time = 0, time_lo = 0, time_hi = 0;          ///< median iteration time and its CI, s
    double speedup = 0, speedup_lo = 0, speedup_hi = 0; ///< weak: scaled speedup (p/p0)·E
    double efficiency = 0, efficiency_lo = 0, efficiency_hi = 0;
    double karp_flatt = 0; ///< strong scaling, p > p0 only
    /// Set when karp_flatt lies outside [0, 1]: then it is no serial fraction (superlinear
    /// speedup below 0, a slowdown above 1) and says so instead of passing for one.
    std::string karp_flatt_note;
    std::string resampled;    ///< "launches" (two-level) or "iterations"
    std::size_t launches = 0; ///< launches of this case
};

struct scaling_result {
    std::string label;
    std::string scaling; ///< strong | weak
    int base_p = 0;
    double base_time = 0;
    double serial_fraction = 0; ///< median Karp-Flatt value, clamped to [0, 1] (strong)
    std::vector<scaling_point> points;
};

/// Karp-Flatt serial fraction e = (1/S - 1/p) / (1 - 1/p) for speedup S on p (relative)
/// processors; NaN for p <= 1.
double karp_flatt(double speedup, double p);

/// Why strong- or weak-scaling arithmetic has no meaning for a family ("" when it has):
/// collectives move a message of a fixed size whatever P is, so their time is not work divided
/// among ranks; bus bandwidth against P is their measure.
std::string scaling_refusal(const family& fam);

/// "" for a Karp-Flatt value in [0, 1] (or NaN); otherwise what a value outside means.
std::string karp_flatt_note(double e);

/// Scaling of one family (needs at least two members and a member at the base P; returns
/// nullopt otherwise). The bootstrap resamples launches, then iterations within them, when
/// both this case and the base have at least `min_launches` launches, else iterations.
std::optional<scaling_result> analyse_scaling(const family& fam, const scaling_options& opt);

} // namespace ringscale::analysis
