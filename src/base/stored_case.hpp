// One case group of a results file as read back, and whether its data can be trusted. The
// one reading ringscale-stats' reader (analysis/reader.cpp) and the launcher's --resume
// (src/engine/resume.cpp) both use, so the two can never disagree about which cases count:
// a case the statistics refuse is run again by --resume, and one they use is not.
//
// Every dataset's class, rank, shape and size is checked before it is read (src/base/h5.hpp
// refuses links and storage outside the file), then the values against their physics.
#pragma once

#include "h5.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::stored {

/// One attribute value: text always, number when it was stored as an integer or float.
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

/// The datasets of one case (warm-up rows kept and flagged), as their checks leave them.
struct case_arrays {
    std::size_t rows = 0;                ///< iterations stored, warm-up included
    std::size_t world = 0;               ///< columns of the timing arrays
    std::vector<std::uint8_t> is_warmup; ///< [rows], 0 or 1
    std::vector<double> time_s;          ///< [rows * world], row-major
    std::vector<double> compute_s;       ///< [rows * world] or empty when not recorded
    std::vector<double> comm_wait_s;     ///< [rows * world] or empty when not recorded
    std::vector<double> loss;            ///< training jobs only
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

/// Warm-up flags for a case stored without an is_warmup dataset: the first `warmup` of
/// `rows` (the case's "warmup" attribute). Empty when the attribute is absent or does not
/// fit the rows, so the caller can refuse to guess.
std::vector<std::uint8_t> warmup_from_attribute(std::size_t rows, const attr_map& attrs);

/// Read the datasets of case group `g`, each shape checked before its data, then
/// data_problem(); throws an hdf5 error with the first reason, naming the dataset. `attrs`:
/// the case's attributes (all groups, flat); `ok`: its status is ok; `max_bytes`: the
/// file's size (no dataset can need more).
case_arrays read_case_arrays(const h5::group& g, const attr_map& attrs, bool ok,
                             std::uint64_t max_bytes);

/// A ringscale/2 case as read back.
struct stored_case {
    attr_map identity;  ///< what the user chose
    attr_map flat;      ///< every group (outcome over derived over run over identity)
    std::string status; ///< ok | failed | skipped ("ok" when the file says nothing)
    bool has_data = false;
    case_arrays data;
};

/// Read a ringscale/2 case group: its four attribute groups and, where it has time_s (an ok
/// case must), its datasets through read_case_arrays. Throws (hdf5 error with the reason)
/// when the case cannot be used: ringscale-stats drops it, --resume runs it again.
stored_case read_case_v2(const h5::group& g, std::uint64_t max_bytes);

} // namespace ringscale::stored
