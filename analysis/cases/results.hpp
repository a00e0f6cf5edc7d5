// In-memory form of results files (ringscale/2, and ringscale/1 read through a known table):
// one `case_data` per /cases/<NNNN> group, holding its identity, all its attributes, its
// per-iteration, per-rank timings (warm-up rows kept and flagged) and its memory per rank.
#pragma once

#include "src/base/machine_marks.hpp"
#include "src/base/stored_case.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// One attribute value: text always, number when it was stored as an integer or float.
using attr_value = stored::attr_value;

/// What a results file says about the launch as a whole.
struct file_info {
    std::string path;
    bool complete = true; ///< false for an interrupted launch (*.h5.part, complete = 0)
    std::string git_commit;
    std::string tool_version;
    std::string created_utc;
    /// Which launch wrote the file: created_utc, git_commit and the launch_id the writer
    /// draws ("id:..."), or for older files a hash of the content ("content:..."). Two
    /// files with one launch (a link, a copy) count once.
    std::string launch;
    std::string schema;                     ///< ringscale/2 or ringscale/1
    std::map<std::string, attr_value> meta; ///< attributes of /meta
    /// The drift sentinel's verdict over the launch (/sentinel): why it drifted, "" when it
    /// did not or the file has no sentinel; and how many probes it ran.
    std::string drift;
    int probes = 0;
};

/// One case of one launch: its attributes, and its datasets as checked on reading
/// (stored::case_arrays: rows, world, is_warmup, time_s, compute_s, comm_wait_s, loss,
/// memory_bytes, threads, affinity_cores).
struct case_data : stored::case_arrays {
    std::shared_ptr<const file_info> file;
    std::string group;                          ///< "0000", "0001", ...
    std::map<std::string, attr_value> attrs;    ///< every group, flat (outcome over derived
                                                ///< over run over identity)
    std::map<std::string, attr_value> identity; ///< what the user chose; the case's key
    std::string job;
    std::string variant;
    std::string status; ///< ok | failed | skipped
    std::string error;
    int world_size = 0;
    std::vector<double> step_s; ///< measured iterations only: slowest rank's time_s
    /// Marks: why the case was measured on a contended machine (its outcome, or
    /// its machine fields judged again: src/base/stored_machine.hpp), and why the launch's
    /// sentinel drifted around it; "" when not.
    std::string contention;
    std::string drift;
    /// The drift's estimated effect (machine::judge_drift's case_effect; factor 1 when the
    /// sentinel did not mark the case). The contention's come from `machine`
    /// (analysis/cases/case_decision.hpp, launch_effects).
    machine::mark_effect drift_effect;
    /// What the machine did during the case (schema::machine_ds -> [world]); empty in older
    /// files or where the reader dropped the fields.
    std::map<std::string, std::vector<double>> machine;
    /// train_step --numerics: the per-step series (schema::numerics_datasets -> [steps]);
    /// empty in other cases and older files.
    std::map<std::string, std::vector<double>> numerics;
    /// --trace: the kept iterations' events as columns (src/base/stored_trace.hpp); empty in
    /// untraced cases and older files.
    std::map<std::string, std::vector<double>> trace;
    /// What the reader dropped from this case (hostile machine fields), one line each.
    std::vector<std::string> read_notes;

    bool ok() const { return status == "ok"; }
    /// Why this launch of the case is marked ("contended: ..." or "drift: ..."), "" if not:
    /// a marked launch never decides a regression, a crossing or a calibration.
    std::string mark() const;
    /// Attribute as a number, or nullopt when absent or not numeric.
    std::optional<double> number(const std::string& name) const;
    /// Attribute as text, or `fallback` when absent.
    std::string text(const std::string& name, const std::string& fallback = "") const;
    /// Measured (non-warm-up) row indices.
    std::vector<std::size_t> measured_rows() const;
    /// Largest value over ranks of memory dataset `name`, or nullopt when not recorded.
    std::optional<double> max_memory(const std::string& name) const;
    /// Short human label "job/variant P=4 a=1 b=2" built from the case's key attributes.
    std::string label() const;
};

} // namespace ringscale::analysis
