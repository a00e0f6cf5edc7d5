// The optional `trace` group of a case (--trace): the kept iterations' events of every rank as
// columns of doubles (trace_events.hpp: column_names, kept_column_names), written by the
// launcher and read back checked. Older files have none; older readers ignore it.
#pragma once

#include "src/base/case_record.hpp"
#include "src/base/h5.hpp"

#include <cstdint>

namespace ringscale::stored {

/// The case subgroup holding a case's trace.
inline constexpr const char* trace_group = "trace";
/// The most events a stored trace may hold (a reader refuses more).
inline constexpr std::uint64_t trace_max_events = 1u << 22;

/// Write rec.trace (non-empty) as the subgroup `trace` of the case group `g`.
void write_trace(const h5::group& g, const results::case_record& rec);

/// Read the subgroup `trace` of `g` into rec.trace when present; one that cannot be believed
/// (a column missing, lengths that differ, values outside their range) is dropped with a note
/// in rec.read_notes, never the case. Never throws.
void read_trace(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes);

} // namespace ringscale::stored
