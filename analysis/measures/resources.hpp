// What a case used besides time: peak memory per rank (host, device, RSS and the training
// categories) and CPU threads/cores, as ringscale-stats' commands show them: memory columns
// in summary and scaling, memory regressions in compare, and the note on an efficiency
// above 1.1 (superlinear: most often a base case that ran on fewer cores).
#pragma once

#include "analysis/cases/cases.hpp"
#include "analysis/comparisons/compare.hpp"
#include "analysis/comparisons/scaling.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ringscale::analysis {

/// A memory dataset shown by the commands: its name, column title (MiB) and json key.
struct memory_figure {
    const char* dataset;
    const char* title;
    const char* key;
};

/// peak_host_bytes, peak_device_bytes, peak_rss_bytes, then the training categories.
const std::vector<memory_figure>& memory_figures();

/// Largest value over ranks and launches of memory dataset `name` in bytes; nullopt when no
/// launch recorded it, or (device memory) when every value is zero.
std::optional<double> peak_memory(const pooled_case& c, const std::string& name);

/// CPU cores the ranks of a case could use in all: the sum over ranks of min(threads,
/// allowed cores) of its first launch; nullopt when not recorded (ringscale/1 files).
std::optional<int> cores_in_use(const pooled_case& c);

/// One line on why an efficiency above 1.1 is suspect (naming the cores each P used where
/// they were recorded), or "" when `efficiency` is at most 1.1 or not finite.
std::string superlinear_note(const pooled_case& base, const pooled_case& point, double efficiency);

/// One line when the case's ranks ran more threads than the cores they could use: the
/// launcher's own warning where the file kept it (/meta warnings), else worked out from the
/// recorded threads, ranks per node and cores (the machine's, or the largest affinity);
/// "" when not oversubscribed or not recorded. An efficiency there is limited by it.
std::string oversubscription_note(const pooled_case& c);

/// "FAMILY P=4: suspect: ..." for every scaling point whose efficiency is above 1.1.
std::vector<std::string> suspect_efficiencies(const std::vector<scaling_result>& results);

/// A matched case whose peak memory grew.
struct memory_change {
    const case_comparison* match = nullptr;
    std::string dataset;
    double base_bytes = 0, new_bytes = 0;
};

/// Matched cases whose peak host, device or RSS memory (max over ranks and launches) grew by
/// more than `threshold` (a fraction) and by more than 1 MiB (RSS: 16 MiB, its noise floor).
std::vector<memory_change> memory_regressions(const comparison& cmp, double threshold);

/// "memory regression: CASE P=2: peak_host_bytes 10 MiB -> 12 MiB (+20.0%)".
std::string describe(const memory_change& m);

} // namespace ringscale::analysis
