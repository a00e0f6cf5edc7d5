// The tables of `ringscale-stats history`: the change points found, and each series' latest
// state (text, md, csv, json through analysis/presentation/table).
#pragma once

#include "series.hpp"

#include "analysis/presentation/table.hpp"

namespace ringscale::analysis::history {

/// One row per change point: the series, where (launch number, date, labels), the step's
/// median before and after with CIs, the change, p, the phase that moved, and (csv/json)
/// each phase's change.
table change_table(const series_set& set);

/// One row per series: launches, the newest's date and median, the launch noise, the
/// smallest step detectable with 90% power, the number of changes and the state now.
table series_table(const series_set& set);

} // namespace ringscale::analysis::history
