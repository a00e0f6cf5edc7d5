// What the history index keeps of each launch and each of its cases (issue 37): enough to
// build every series without opening a results file again, and nothing the files do not say.
// The HDF5 files stay the truth: every record is rebuilt from them when the index is lost.
#pragma once

#include "analysis/cases/results.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis::history {

/// One launch (one results file, or several paths holding it once).
struct launch_record {
    std::string launch; ///< file_info::launch: "id:..." or "content:..."
    std::string path;   ///< the file its cases were read from
    std::string created_utc;
    /// When it ran, Unix seconds (/meta launchdate, else created_utc); the least int64 when
    /// neither is a date.
    std::int64_t time_s = 0;
    std::string git_commit; ///< ringscale's own commit
    bool complete = true;
    std::map<std::string, std::string> meta; ///< /meta attributes as text; labels as label.KEY

    /// The user's labels (ringscale --label), key without the prefix.
    std::map<std::string, std::string> labels() const;
};

/// One case of one launch, summarised: launch medians of the step and of its phases.
struct launch_case {
    std::string launch;
    std::string key;             ///< case_key: identity, P and topology
    std::string label;           ///< "job/variant a=1 P=4"
    std::int64_t iterations = 0; ///< measured iterations, over the case's repeats
    double step_s = 0;           ///< median over iterations of the slowest rank's time
    /// Medians over iterations of the mean over ranks (NaN when the file has no phases):
    double compute_s = 0;    ///< compute_s
    double comm_s = 0;       ///< comm_wait_s: time blocked on (exposed) communication
    double wait_s = 0;       ///< the step less the mean rank's time: waiting for the slowest rank
    double memory_bytes = 0; ///< largest peak over ranks (device when recorded, else host)
    std::string machine;     ///< case_data::mark() of its first marked repeat ("" if none)
    /// Median over iterations of the mean over ranks of compute_cpu_s: the CPU time of the
    /// compute phases, every thread's (NaN where the file has none).
    double compute_cpu_s = std::numeric_limits<double>::quiet_NaN();
};

/// " [effect xF]": the largest estimated effect of the marks of `c` on its whole time
/// (analysis/cases/case_decision.hpp; oversubscription left out), appended to the mark text
/// the index keeps; " [effect unbounded]" where it cannot be estimated.
std::string mark_effect_suffix(const case_data& c);

/// The effect a kept mark text states (mark_effect_suffix), or infinity where it states none
/// (an index written before issue 49: the mark could account for anything, as it did).
double mark_effect_of(const std::string& machine);

/// The mark text without its effect.
std::string mark_text_of(const std::string& machine);

/// The launch of a file read by the checked reader.
launch_record describe_launch(const file_info& info);

/// One summary per case key of one launch's `cases` (status ok, with timings); the
/// repeats of a case (--repeat) pooled as one.
std::vector<launch_case> summarize_launch(const std::vector<case_data>& cases);

/// 2000-01-01T00:00:00Z: no launch of this program is older (issue 50).
inline constexpr std::int64_t earliest_launch_s = 946684800;

/// Why `l`'s date cannot place it in a series: not a calendar date (time_s is then the
/// least int64: a launchdate past int64, a created_utc such as Feb 31), or before 2000;
/// "" when it can. Future dates are judged against the clock when the series are built.
std::string date_problem(const launch_record& l);

/// Unix seconds of "YYYY-MM-DDTHH:MM:SSZ" (a calendar date: not Feb 31), or nullopt when it
/// is not one.
std::optional<std::int64_t> parse_utc(const std::string& text);

/// "YYYY-MM-DD HH:MM" (UTC) of Unix seconds `t`.
std::string format_utc(std::int64_t t);

} // namespace ringscale::analysis::history
