// Export for pandas and spreadsheets: long-format CSV of every sample and JSON summaries.
#pragma once

#include "results.hpp"
#include "summary.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

namespace ringscale::analysis {

/// Header of the long-format CSV.
inline constexpr const char* long_csv_header =
    "file,group,complete,job,variant,world_size,case,status,iteration,is_warmup,rank,time_s,"
    "compute_s,comm_wait_s";

/// One row per case x iteration x rank (warm-up rows included, flagged); times in seconds
/// at full precision; empty fields where a dataset is absent.
void write_long_csv(const std::vector<case_data>& cases, std::ostream& out);

/// The summary rows as JSON: {"schema": "ringscale-stats/summary/1", "cases": [...]}.
nlohmann::json summaries_json(const std::vector<case_summary>& rows);

} // namespace ringscale::analysis
