// --trace N after a case's iterations: which timed iterations to keep (1: the median by the
// slowest rank's time; 2: the median and the slowest), and every rank's events of those
// iterations gathered, each on its own rank's time base: seconds from the end of the barrier
// that started the iteration on that rank. The remaining skew (a receive seen complete before
// its send was posted, on that base) is measured and kept with each iteration.
#pragma once

#include "comm/communicator.hpp"
#include "src/base/case_record.hpp"
#include "src/base/trace_events.hpp"

#include <vector>

namespace ringscale {

/// The events --trace keeps per case at most (a bounded buffer; the rest are counted).
inline constexpr std::size_t trace_max_events = 1u << 20;

/// The rows to keep for `keep` (1 or 2) of `rec` (time_s gathered), with their reason (0
/// median, 1 slowest); the slowest only when it is not the median row. Pure.
std::vector<std::pair<int, int>> kept_iterations(const results::case_record& rec, int keep);

/// Events of `events` moved onto the iteration time base (start and end less the iteration's
/// start in `r`); a transfer seen only as posted ends at its last seen point. Pure.
std::vector<trace::event> rebased(const trace::recorder& r, const std::vector<int>& rows, int rank);

/// The remaining skew of iteration `row` in `events` (every rank's): the most any receive
/// completed before its send was posted, 0 when none did. Pure.
double alignment_skew_s(const std::vector<trace::event>& events, int row);

/// rec.trace from every rank's recorder (collective over `world`): the kept iterations' events,
/// their kept_* columns and rank_host (`node_of`: each rank's node index). `rec.time_s` must
/// be gathered already.
void gather_trace(comm::communicator& world, const trace::recorder& r, int keep,
                  const std::vector<int>& node_of, results::case_record& rec);

} // namespace ringscale
