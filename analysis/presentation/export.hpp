// Export for pandas and spreadsheets: long-format CSV of every sample and JSON summaries.
#pragma once

#include "analysis/cases/results.hpp"
#include "analysis/measures/summary.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// Header of the long-format CSV.
inline constexpr const char* long_csv_header =
    "file,group,complete,job,variant,world_size,case,status,iteration,is_warmup,rank,time_s,"
    "compute_s,comm_wait_s";

/// One row per case x iteration x rank (warm-up rows included, flagged); times in seconds
/// at full precision; empty fields where a dataset is absent.
void write_long_csv(const std::vector<case_data>& cases, std::ostream& out);

/// Throws config_error (one line, before anything is written) when the export target `path`
/// is one of the results files read (`inputs`, compared by file identity, so links and other
/// spellings count) or any existing HDF5 file: an export must never overwrite results.
void refuse_overwriting_results(const std::string& path, const std::vector<std::string>& inputs);

/// The summary rows as JSON: {"schema": "ringscale-stats/summary/1", "cases": [...]}.
nlohmann::json summaries_json(const std::vector<case_summary>& rows);

} // namespace ringscale::analysis
