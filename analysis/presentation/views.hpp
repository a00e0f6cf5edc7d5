// Tables of the analysis results, as printed by the table commands and the report.
#pragma once

#include "analysis/comparisons/compare.hpp"
#include "analysis/comparisons/scaling.hpp"
#include "analysis/measures/summary.hpp"
#include "analysis/models/model.hpp"
#include "table.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// "1.234 ms", "56.78 us", "2.345 s": four significant digits; "-" for NaN.
std::string format_time(double seconds);
/// A size as the options write it: "16M", "4K", "512" (whole MiB or KiB, else bytes).
std::string size_text(double bytes);
/// "[1.230 ms, 1.240 ms]" or "-" when either end is NaN.
std::string format_interval(double lo, double hi, bool as_time);
/// A time in seconds shown by format_time.
cell time_cell(double s);
/// Bytes as MiB with one decimal; "-" (null) when not above 0.
cell mib_cell(double bytes);

/// One row per case (see case_summary); columns with no value in any row are dropped.
table summary_table(const std::vector<case_summary>& rows);

/// One row per family and P.
table scaling_table(const std::vector<scaling_result>& results);

/// A fitted family model.
struct family_model {
    std::string label;
    std::vector<double> p;
    std::vector<double> t;
    model_fit fit;
    std::vector<prediction> predictions;
};

/// A fitted model as a row of a model table: what it models, its points and its fit.
struct model_row {
    std::string label;
    std::size_t points = 0;
    std::string formula;
    double smape = 0, cv_smape = 0, r2 = 0;
};

/// A predicted point as a row of a prediction table; `s`: the sequence-length cell of a
/// two-parameter model (t(p, S)), none for t(p).
struct prediction_row {
    std::string label;
    double p = 0;
    std::optional<cell> s;
    double value = 0, lo = 0, hi = 0;
    std::string extrapolated; ///< "no", "yes", "yes (2x beyond data)"
    /// Non-empty: beyond what the data supports; no number, this text in `extrapolated`.
    std::string refusal;
};

/// The one writer of model tables: one row per model, its formula and fit errors.
/// `what`: the label column ("family", "group"); `model`: the formula's title.
table fit_table(const char* what, const char* model, const std::vector<model_row>& rows);

/// The one writer of prediction tables: one row per predicted point, with its band; the S
/// column (each row's `s`) when `with_s`.
table predictions_table(const char* what, bool with_s, const std::vector<prediction_row>& rows);

/// One row per family: the chosen formula and its fit error.
table model_table(const std::vector<family_model>& models);

/// One row per family and predicted P.
table prediction_table(const std::vector<family_model>& models);

/// One row per matched case.
table compare_table(const comparison& cmp);

} // namespace ringscale::analysis
