// How long the history's reader may take over one results file (analysis/history/
// file_summaries.hpp reads each in a child): a limit of CPU time that grows with the file's
// size, so a busy machine or a large launch does not make a sound file look damaged, and a
// wall clock for a read blocked on its storage. Its base comes from RINGSCALE_READ_LIMIT_S.
#pragma once

#include <string>

namespace ringscale::analysis::history {

/// The read limit's base, in CPU seconds, unless RINGSCALE_READ_LIMIT_S says otherwise.
inline constexpr double default_read_limit_s = 10;

/// The CPU seconds a child may spend reading `path`: `base_s` x (1 + its size in MiB / 5), with
/// the default base 10 s plus 2 s a MiB (a 1,000-case launch of 12.7 MB: 34 s; a 10,000-case
/// launch: about 5 min). Counted in CPU time, so a busy machine does not shorten it.
double read_cpu_limit_s(const std::string& path, double base_s = default_read_limit_s);

/// The wall-clock cap on a read whose CPU-time cap is `cpu_s`: 4 x that plus 10 s.
double read_wall_limit_s(double cpu_s);

/// A limit in seconds as a message reads it: whole from 10 s up ("34"), else three digits
/// ("0.00196").
std::string limit_seconds_text(double s);

/// The read limit's base from the environment: RINGSCALE_READ_LIMIT_S, a plain decimal number
/// of seconds from 0.001 to 86400 (the limit of every file scales with it), or
/// default_read_limit_s when unset or empty. Throws config_error, one line naming the variable
/// (its value cut to 64 characters and escaped), for any other value.
double read_limit_from_env();

} // namespace ringscale::analysis::history
