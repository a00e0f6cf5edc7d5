// One case group of a results file read back as the one case record (results::case_record,
// src/base/case_record.hpp, what the writer stores), and whether its data can be trusted.
// The one reading ringscale-stats' reader (analysis/reader.cpp) and the launcher's --resume
// (src/engine/resume.cpp) both use, so the two can never disagree about which cases count:
// a case the statistics refuse is run again by --resume, and one they use is not.
//
// Every dataset's class, rank, shape and size is checked before it is read (src/base/h5.hpp
// refuses links and storage outside the file), then the values against their physics.
#pragma once

#include "case_record.hpp"
#include "h5.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::stored {

/// One attribute value as the checks and ringscale-stats see it: text always, number when it was
/// stored as an integer or float.
struct attr_value {
    std::string text;
    std::optional<double> number;
    bool is_integer = false;
};

using attr_map = std::map<std::string, attr_value>;

/// Every attribute of `obj`. String values are kept as terminal_text (src/base/text_escape.hpp):
/// text from a file is for display and keys, and never carries a control character. Throws
/// an hdf5 error naming the first attribute that is not a single value.
attr_map read_attrs(const h5::object& obj);

/// The datasets of one case as numbers (warm-up rows kept and flagged): what the checks
/// look at, and the statistics' view of a case record (arrays_of).
struct case_arrays {
    std::size_t rows = 0;                ///< iterations stored, warm-up included
    std::size_t world = 0;               ///< columns of the timing arrays
    std::vector<std::uint8_t> is_warmup; ///< [rows], 0 or 1
    std::vector<double> time_s;          ///< [rows * world], row-major
    std::vector<double> compute_s;       ///< [rows * world] or empty when not recorded
    std::vector<double> comm_wait_s;     ///< [rows * world] or empty when not recorded
    /// schema::cpu_datasets recorded -> [rows * world] (CPU times finite and >= 0; counts
    /// NaN where not supported, else >= 0).
    std::map<std::string, std::vector<double>> cpu;
    std::vector<double> loss; ///< training jobs only
    /// Memory per rank in bytes ([world] each, when recorded): peak_host_bytes,
    /// peak_device_bytes, peak_rss_bytes and the training categories (param_bytes, ...).
    std::map<std::string, std::vector<double>> memory_bytes;
    std::vector<int> threads;        ///< [world] threads each rank used (ringscale/2)
    std::vector<int> affinity_cores; ///< [world] cores each rank was allowed (ringscale/2)
};

/// How far comm_wait_s may exceed time_s of the same rank and row (clock granularity):
/// comm_wait_s <= time_s * (1 + comm_tolerance_rel) + comm_tolerance_s.
inline constexpr double comm_tolerance_rel = 1e-3;
inline constexpr double comm_tolerance_s = 1e-6;

/// Why the data of a case cannot be trusted, or "" when it can. Pure. Checks: the
/// world_size attribute (when given) equals the rank columns; warm-up flags 0 or 1, one
/// per row; an ok case has a timed row; times finite and >= 0; comm_wait_s within time_s;
/// every per-rank array of world length with finite values >= 0; the derived factor and
/// counts (busbw_factor, bytes, count, flops, comm bytes, tokens) finite and >= 0.
std::string data_problem(const case_arrays& d, const attr_map& attrs, bool ok);

/// Why a case's identity contradicts itself or holds a value no launch writes, or "".
/// Pure. Checks: world_size, nodes and ranks_per_node, when present, whole numbers from
/// 1 to 2^24, nodes x ranks_per_node = world_size (with uneven_nodes = 1, ranks_per_node the
/// most on one node: nodes >= 2 and nodes - 1 + ranks_per_node <= world_size < nodes x
/// ranks_per_node); shift a distance from 1 to world_size - 1 or "node"; every enumerated
/// attribute (schema::allowed_values) one of its values.
std::string identity_problem(const attr_map& identity);

/// Warm-up flags for a case stored without an is_warmup dataset: the first `warmup` of
/// `rows` (the case's "warmup" attribute). Empty when the attribute is absent or does not
/// fit the rows, so the caller can refuse to guess.
std::vector<std::uint8_t> warmup_from_attribute(std::size_t rows, const attr_map& attrs);

/// An attribute of a case record as text and number (integers exactly as the file has them).
attr_value view_of(const results::attr_value& v);
/// Every attribute of `m` through view_of.
attr_map view_of(const results::attr_map& m);

/// The datasets of `rec` as numbers: the per-rank memory datasets it has (peaks and training
/// categories, each only when recorded), loss when recorded. Pure.
case_arrays arrays_of(const results::case_record& rec);

/// The status of a case as read back: outcome's status, "ok" when the file says nothing.
std::string status_of(const results::case_record& rec);

/// Read ringscale/2 case group `g` into a case record: its four attribute groups (text
/// through terminal_text), its case_key and, where it has time_s (an ok case must), its
/// datasets, each shape checked before its data, then data_problem(), then
/// identity_problem(). Throws an hdf5 error with the first reason (naming the dataset) when the
/// case cannot be used: ringscale-stats drops it, --resume runs it again. `max_bytes`: the
/// file's size (no dataset can need more). The datasets of a case with no is_warmup dataset get the
/// flags of warmup_from_attribute; the peak byte counts, checked as numbers, are held as whole
/// bytes (u64, as the writer stores them); affinity_list stays unread.
results::case_record read_case_record(const h5::group& g, std::uint64_t max_bytes);

/// Read a ringscale/1 case group (attributes on the group itself, each put in the group
/// schema::v1_attr_group names) with the same checks as read_case_record.
results::case_record read_v1_case_record(const h5::group& g, std::uint64_t max_bytes);

} // namespace ringscale::stored
