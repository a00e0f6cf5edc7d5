// Launches as the unit of replication: a two-level (hierarchical) bootstrap for iteration
// times grouped by launch. Each replicate draws L launches with replacement, then, within
// every drawn launch, its n iterations with replacement, and takes the median of the pooled
// draws. This is the nested bootstrap of Davison & Hinkley (1997, section 3.8, "Strategy 2":
// resample at both stages) and the hierarchical resampling Kalibera & Jones recommend for
// benchmarks whose launches differ ("Rigorous benchmarking in reasonable time", ISMM 2013;
// "Quantifying performance changes with effect size confidence intervals", 2012):
// iterations of one launch share that launch's state (placement, clocks, neighbours), so
// they are not independent repetitions and an iteration-level test calls launch-to-launch
// noise a regression. Resampling at both stages slightly over-states the variance (the
// within-launch part counts twice), which offsets the percentile bootstrap's under-statement
// with few launches ((L-1)/L). With one launch the launch draw is skipped and the scheme is
// exactly the iteration bootstrap of bootstrap.hpp; it then says nothing about launch noise.
#pragma once

#include "analysis/cases/results.hpp"
#include "bootstrap.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace ringscale::analysis {

/// Iteration times (s) grouped by launch: one inner vector per launch, none empty.
using launch_samples = std::vector<std::vector<double>>;

/// The measured iteration times (step_s) of each launch, in order; launches without any are
/// left out.
launch_samples launch_steps(const std::vector<const case_data*>& launches);

/// Fill `out` with one two-level resample of `in` (launches, then iterations within each
/// drawn launch), pooled. With one launch only iterations are drawn.
void resample_two_level(const launch_samples& in, std::vector<double>& out, splitmix64& rng);

/// Median of all iterations of all launches pooled; NaN when there are none.
double pooled_median(const launch_samples& in);

/// B replicates of the pooled median of `a` under two-level resampling (fixed seed).
std::vector<double> two_level_median_replicates(const launch_samples& a, std::size_t replicates,
                                                std::uint64_t seed);

/// Replicate medians of two samples drawn independently by two-level resampling (a then b per
/// replicate, fixed seed): a[i] and b[i] belong to replicate i.
struct median_pairs {
    std::vector<double> a;
    std::vector<double> b;
};
median_pairs two_level_median_pairs(const launch_samples& a, const launch_samples& b,
                                    std::size_t replicates, std::uint64_t seed);

/// combine(a[i], b[i]) for every replicate pair.
std::vector<double> combine_pairs(const median_pairs& m,
                                  const std::function<double(double, double)>& combine);

/// B replicates of combine(median(a*), median(b*)): combine_pairs of two_level_median_pairs.
std::vector<double> two_level_replicates(const launch_samples& a, const launch_samples& b,
                                         const std::function<double(double, double)>& combine,
                                         std::size_t replicates, std::uint64_t seed);

/// Two-sided bootstrap p-value of "the statistic equals `null_value`":
/// min(1, 2 min(#{r <= null} + 1, #{r >= null} + 1) / (B + 1)). Never below 2 / (B + 1).
double bootstrap_p_value(const std::vector<double>& replicates, double null_value);

/// Replicates needed so that `tests` Holm-adjusted bootstrap p-values can reach alpha / 10:
/// max(requested, min(ceil(20 tests / alpha) - 1, 20000)); the cap bounds the run time (with
/// it, up to 500 cases can still reach alpha).
std::size_t replicates_for(std::size_t requested, std::size_t tests, double alpha);

} // namespace ringscale::analysis
