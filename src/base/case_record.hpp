// One case of a results file (schema ringscale/2, names in results_schema.hpp): the one type
// for a case record. The launcher's run loop fills it, its writer stores it
// (write_case_record); --resume and ringscale-stats' reader read it back, checked
// (stored::read_case_record, src/base/stored_case.hpp); the live table and the closing
// comparison present it. No MPI.
#pragma once

#include "src/base/h5.hpp"
#include "src/base/results_schema.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ringscale::results {

/// A typed attribute value, as HDF5 stores it: text, integer or floating point.
using attr_value = std::variant<std::string, std::int64_t, double>;
using attr_map = std::map<std::string, attr_value>;

/// The value as text: a string as is, numbers with full precision ("4096", "0.001").
std::string attr_text(const attr_value& v);

/// The value as a number; nullopt for text.
std::optional<double> attr_number(const attr_value& v);

/// Everything the file holds about one case, gathered from all ranks.
struct case_record {
    attr_map identity;          ///< what the user chose: job, variant, options, world_size, ...
    attr_map run;               ///< how it was measured: warmup, iterations, seed (repeat)
    attr_map derived;           ///< computed from identity and P: dp, degrees, flops_per_iter, ...
    attr_map outcome;           ///< status, error, validated, max_abs_err, tolerance, final_loss
    int world = 0;              ///< columns of the per-rank arrays
    int rows = 0;               ///< warm-up + timed iterations actually run
    std::vector<double> time_s; ///< [rows][world], row-major
    std::vector<double> compute_s;                ///< [rows][world]
    std::vector<double> comm_wait_s;              ///< [rows][world]
    std::vector<std::uint8_t> is_warmup;          ///< [rows]
    std::vector<std::uint64_t> peak_host_bytes;   ///< [world]
    std::vector<std::uint64_t> peak_device_bytes; ///< [world]
    std::vector<std::uint64_t> peak_rss_bytes;    ///< [world]
    std::vector<std::int32_t> threads;            ///< [world] CPU threads each rank used
    std::vector<std::int32_t> affinity_cores;     ///< [world] cores each rank may run on
    std::vector<std::string> affinity_list;       ///< [world] those cores, "0-3,8"
    std::map<std::string, std::vector<double>> per_iteration; ///< [rows], e.g. loss
    std::map<std::string, std::vector<double>> per_rank;      ///< [world], e.g. param_bytes
    std::string case_key; ///< identity + run across launches (--resume), a scalar string
    /// What the machine did during the case (schema::machine_ds names -> [world]; NaN not
    /// known), stored as the subgroup `machine`; empty in older files.
    std::map<std::string, std::vector<double>> machine;
    /// train_step --numerics: per-step series (schema::numerics_datasets() names -> [steps]),
    /// stored as the subgroup `numerics`; empty in older files and other cases.
    std::map<std::string, std::vector<double>> numerics;
    /// --trace: the kept iterations' events of every rank as columns (stored_trace.hpp, the
    /// subgroup `trace`); empty in older files and untraced cases.
    std::map<std::string, std::vector<double>> trace;
    /// Reader only, never stored: what was dropped from the case as read, one line each (the
    /// machine fields when they cannot be believed).
    std::vector<std::string> read_notes;

    /// The attributes of group `g`.
    const attr_map& group(schema::attr_group g) const;
    attr_map& group(schema::attr_group g);
    /// All four groups in one map (outcome over derived over run over identity).
    attr_map flat() const;
    /// Attribute `name` from the groups in flat()'s order; nullptr when absent.
    const attr_value* find(const std::string& name) const;
    /// Attribute `name` as text ("" when absent).
    std::string text(const std::string& name) const;
    /// Attribute `name` as a number (nullopt when absent or text).
    std::optional<double> number(const std::string& name) const;
    /// outcome's status (ok | failed | skipped; "" when absent).
    std::string status() const { return text(schema::attr::status); }

    /// The slowest rank's value of each timed (not warm-up) row of `per_rank` ([rows][world]).
    std::vector<double> slowest_timed(const std::vector<double>& per_rank) const;
    /// Median of slowest_timed(per_rank); 0 when no timed row.
    double median_slowest(const std::vector<double>& per_rank) const;
    /// Median step time: median_slowest(time_s), seconds.
    double median_step_s() const { return median_slowest(time_s); }
};

/// Write every attribute of `attrs` onto `obj` with its type.
void write_attrs(const h5::object& obj, const attr_map& attrs);

/// Write `rec` into the new, empty case group `g`: its four attribute groups and datasets.
void write_case_record(const h5::group& g, const case_record& rec);

} // namespace ringscale::results
