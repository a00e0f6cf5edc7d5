// One launch counts once: a results file seen twice (through a link, two paths or
// a byte-identical copy) and a case group duplicated inside one file must not become extra
// launches, which would make `compare` call a regression on no evidence.
#pragma once

#include "analysis/cases/results.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ringscale::analysis {

/// The launch a file holds (file_info::launch): "id:<created_utc>|<git_commit>|<launch_id>"
/// when the root attributes carry a launch_id (written since schema ringscale/2's launch_id),
/// else "content:<size>:<hash of the bytes>". Throws io error when the file cannot be read.
std::string launch_key(const std::string& path, const std::map<std::string, attr_value>& root);

/// Whether the files `a` and `b` hold the same bytes.
bool same_content(const std::string& a, const std::string& b);

/// The launches read so far. Not thread-safe.
class launch_registry {
  public:
    /// "" when `info`'s launch is new (it is then recorded), else the path of the file that
    /// already gave it. A content key counts as seen only when the bytes are equal.
    std::string earlier_file(const file_info& info);

    /// `info`'s file gives its launch from now on, in place of `old_path` (a fuller copy).
    void replace_file(const file_info& info, const std::string& old_path);

  private:
    std::map<std::string, std::vector<std::string>> m_paths; // launch key -> files
};

/// The identity of a case within its launch: its key (job, variant, P, identity) and how it
/// was run (warmup, iterations, seed, repeat). Two case groups of one file with equal keys
/// are one case written twice.
std::string run_key(const case_data& c);

/// Remove from `cases` (all of one file) every case group whose run_key an earlier group
/// has; returns (removed group, earlier group) for each.
std::vector<std::pair<std::string, std::string>>
drop_duplicate_cases(std::vector<case_data>& cases);

} // namespace ringscale::analysis
