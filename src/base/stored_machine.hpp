// The machine state of a results file read back and checked (schema::machine_group of a case,
// the /sentinel probes): optional, so a file without them reads as before, and, like every
// field, hostile or contradictory values are dropped with one line (the case itself stays:
// its timings do not depend on them). Used by stored::read_case_record and ringscale-stats.
#pragma once

#include "case_record.hpp"
#include "h5.hpp"
#include "machine_marks.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::stored {

/// Read the `machine` subgroup of case group `g` (when there is one) into rec.machine, each
/// known dataset's shape checked ([world]) before its data, then machine_fields_problem();
/// what cannot be believed is left out with one line in rec.read_notes. A `contended`
/// outcome attribute that is not 0 or 1 is removed the same way. Never throws for these
/// fields (the HDF5 wrapper's refusals included).
void read_machine_state(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes);

/// The optional `numerics` subgroup of case group `g` (train_step --numerics) into
/// rec.numerics: the known series, each 1-D of one common length of at most
/// schema::numerics_max_steps, checked before reading. Values may be non-finite (a diverged
/// run). A group that breaks these rules is dropped with a line in rec.read_notes, never the
/// case. Files without it read unchanged.
void read_numerics(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes);

/// Whether a case is marked, and why: the file's own `contended`/`contention` outcome, or the
/// rule of machine_marks.hpp applied again to its fields (a file cannot hide a mark its
/// figures show). "" when not marked. Pure.
std::string contention_of(const results::case_record& rec);

/// The sentinel of a file: its probes in run order, and problems dropping them (one line).
struct sentinel_record {
    std::vector<machine::probe> probes;
    std::string problem; ///< why the probes were dropped ("" when kept or absent)
};

/// Read /sentinel from the root group `root` of a file with `cases` case groups; absent: no
/// probes. Probes that cannot be believed (probes_problem, machine_fields_problem, the
/// wrapper's refusals) are all dropped with the reason. Never throws.
sentinel_record read_sentinel(const h5::group& root, int cases, std::uint64_t max_bytes);

} // namespace ringscale::stored
