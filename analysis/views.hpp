// Tables of the analysis results, as printed by the table commands and the report.
#pragma once

#include "compare.hpp"
#include "model.hpp"
#include "scaling.hpp"
#include "summary.hpp"
#include "table.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// "1.234 ms", "56.78 us", "2.345 s": four significant digits; "-" for NaN.
std::string format_time(double seconds);
/// "[1.230 ms, 1.240 ms]" or "-" when either end is NaN.
std::string format_interval(double lo, double hi, bool as_time);

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

/// One row per family: the chosen formula and its fit error.
table model_table(const std::vector<family_model>& models);

/// One row per family and predicted P.
table prediction_table(const std::vector<family_model>& models);

/// One row per matched case.
table compare_table(const comparison& cmp);

/// Remove columns whose cells are all null.
void drop_empty_columns(table& t);

} // namespace ringscale::analysis
