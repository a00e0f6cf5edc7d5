// The tables of `ringscale-stats predict`: the figures a prediction rests on (calibrated, with
// bands, or assumed), predictions, a validation against held-out cases, and the memory
// formulas against measured peaks.
#pragma once

#include "analysis/presentation/table.hpp"
#include "evaluate.hpp"

#include <string>
#include <utility>
#include <vector>

namespace ringscale::analysis::predict {

/// Every figure, its value, band and source.
table figures_table(const calibration& point, const std::vector<calibration>& reps,
                    const hardware_profile* hw, const model_error& err, double level);

/// One row per target: predicted step, band, efficiency, memory per rank and whether it fits
/// (with a hardware profile), the dominant figure, or why there is no prediction.
table prediction_table(const std::vector<predicted>& rows, const hardware_profile* hw,
                       double level);

struct validation_summary {
    std::size_t cases = 0;             ///< unmarked held-out cases predicted
    double median_abs_error = unknown; ///< fraction
    double coverage = unknown;         ///< fraction of measured medians inside their band
    std::size_t covered = 0;           ///< those cases
    /// Median of predicted / measured - 1: the error the cases share (a run's offset, which
    /// moves a whole run's coverage up or down together).
    double median_signed_error = unknown;
    double median_width = unknown; ///< median of the bands' upper / lower
    /// Unmarked cases whose band could not be calibrated (predicted::band_note): in the error
    /// figures, not in the coverage (which counts cases - unbanded).
    std::size_t unbanded = 0;
    /// Held-out cases whose every launch is marked: shown, and left out of the
    /// figures above; their own figures for comparison.
    std::size_t marked = 0;
    double marked_median_abs_error = unknown;
    double marked_coverage = unknown;
    double marked_median_width = unknown;
};

/// One row per held-out case: measured, predicted [band], error; fills `sum`.
table validation_table(const std::vector<predicted>& rows, double level, validation_summary& sum);

/// The level of the coverage's interval, fixed and stated whatever the bands' level: a band's
/// --confidence says how wide a band is, not how sure the count of covered cases makes us.
inline constexpr double coverage_ci_level = 0.95;

/// `median |error| X% over N cases; 90% band coverage Y% (k of N, 95% CI lo-hi%); median band
/// width Wx (upper/lower); median signed error +Z%`, then the marked cases left out, if any.
/// The CI is Clopper-Pearson's at coverage_ci_level: what k of N covered says about the bands'
/// true coverage (19 of 19 is within reach of a 90% band: 0.9^19 = 13.5%).
std::string summary_line(const validation_summary& sum, double level);

/// Clopper-Pearson interval at `level` for a proportion of k successes in n trials (n > 0):
/// Boost.Math's binomial bounds on p, each at (1 - level) / 2.
std::pair<double, double> proportion_interval(std::size_t k, std::size_t n, double level);

/// Measured peak memory per rank against the scheme's formula (measured cases only).
table memory_table(const std::vector<predicted>& rows);

} // namespace ringscale::analysis::predict
