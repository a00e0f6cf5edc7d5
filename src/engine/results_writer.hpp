// The results file (schema ringscale/2, names in src/base/results_schema.hpp): written by rank 0
// only, one case appended and flushed at a time, under `<path>.part` until the launch ends.
#pragma once

#include "src/base/case_record.hpp"
#include "src/base/h5.hpp"
#include "src/base/machine_marks.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/config.hpp"
#include "src/engine/metadata.hpp"
#include "src/engine/params.hpp"
#include "src/engine/results_identity.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ringscale {

inline constexpr const char* schema_version = schema::version;

/// The record of one case (src/base/case_record.hpp): what run_case returns and append writes.
using results::case_record;

/// Where this launch's file goes: `-o x.h5` as given, or a new name in the `-o` directory
/// (created if missing). Throws config_error if it cannot be written. Rank 0 only.
std::string resolve_output_path(const launch_config& cfg, int world_size);

/// Bytes a case of `rows` iterations on `world` ranks adds to the file, generously rounded up.
std::uint64_t estimated_case_bytes(int rows, int world);

/// Bytes the file's root, /meta (command line and resolved config included: a long command
/// line is most of it) and /ranks take, generously rounded up, for `world` ranks.
std::uint64_t estimated_metadata_bytes(const launch_config& cfg, int world);

/// Why `bytes` more cannot be written to the file `path` (free space on its filesystem, the
/// process's file-size limit), or "" if they fit. Not collective.
std::string room_problem(const std::string& path, std::uint64_t bytes);

class results_writer {
  public:
    /// Create `<final_path>.part` and write the root attributes (launch_id included), /meta
    /// and /ranks. When that fails (a full disk), the `.part` is removed and an io error
    /// names the file and the cause in one line.
    results_writer(std::string final_path, const launch_config& cfg, const run_metadata& md);
    /// Record which planned cases an earlier launch completed (--resume): /meta/resumed.
    void write_resumed(const std::vector<std::string>& where);
    /// Append case number `index` as /cases/<NNNN> and flush. Throws an io error naming the
    /// file and the case when it cannot (disk full, file-size limit); earlier cases stay.
    void append(int index, const case_record& rec);
    /// Append sentinel probe number `index` as /sentinel/<NNNN> and flush (an io error like
    /// append's when it cannot).
    void append_probe(int index, const machine::probe& p);
    /// Write the sentinel's verdict as /sentinel's attributes (the tolerances, drifted, drift).
    void write_drift(const machine::drift_verdict& v);
    /// Set `complete`, close and rename to the final path (also when incomplete). Idempotent.
    void finish(bool complete);
    /// finish(false) from another thread (the watchdog); gives up after `wait_ms` if the
    /// writer is busy (e.g. hung on a full disk). Returns whether the file was closed.
    bool finish_incomplete_within(int wait_ms);
    const std::string& final_path() const { return m_final; }
    std::string temp_path() const { return m_final + ".part"; }

  private:
    void write_case(int index, const case_record& rec);
    void write_metadata(const launch_config& cfg, const run_metadata& md);
    void finish_locked(bool complete);
    /// Throws an io error `where: reason` when the .part is gone or was replaced.
    void require_our_file(const std::string& where) const;
    std::string m_final;
    file_identity m_identity; // the .part this launch created
    std::optional<h5::file> m_file;
    std::timed_mutex m_mutex; // the main thread and the watchdog may both close the file
};

} // namespace ringscale
