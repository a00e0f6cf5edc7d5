// TEST FIXTURE: a real history kept small as test data, and written back as results files.
// record_history reads the launches of real results files (the analysis reader) and keeps,
// per launch and case, what the history and its verdict read: the launch's date, labels and
// the /meta values that make its environment or that moved_with() names (mpi_transport, ...),
// each case's identity, median step and phases and its machine fields (what marks it), one
// tab-separated line each, after '#' lines that say where it came from. replay_history turns such a
// recording into fixture files (analysis_fixture.hpp) whose cases have those medians and machine
// fields.
#pragma once

#include "tests/analysis/analysis_fixture.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace ringscale::test_fixture {

/// Write the recording of every launch in `inputs` (files or directories), ordered by their
/// launch date, to `out`. Throws config_error on a file the reader cannot read.
void record_history(const std::vector<std::string>& inputs, std::ostream& out);

/// The launches of a recording, in its order: one fixture file each (launch_id from its
/// number). Throws config_error, naming the line, on a line that is not a recording's.
std::vector<fixture_file> replay_history(std::istream& in);

} // namespace ringscale::test_fixture
