// A traced iteration as Chrome trace-event JSON, which Perfetto and chrome://tracing open: one
// process per rank named "rank r (host h)" ("M" metadata), one thread per stream and
// direction (compute, send and receive per tag, collectives), each event an "X" complete event
// with ts and dur in microseconds from the iteration's start, a flow ("s" to "f") from each send
// to its matching receive, args with the ring step, bytes and the block's FLOPs. Events on one
// thread are either apart or nested: one that would cross another moves to a further thread of
// its stream. Text from the file (the case label) only ever lands in JSON strings.
#pragma once

#include "analysis/measures/overlap.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace ringscale::analysis {

/// One iteration to draw: its events and the case it belongs to.
struct trace_source {
    std::string label; ///< the case (escaped on output by JSON's rules)
    const traced_iteration* iteration = nullptr;
};

/// The trace-event document ({"traceEvents": [...], "displayTimeUnit": "ms", ...}) of
/// `sources`, the processes of source i numbered from i * 65536. Pure.
nlohmann::json chrome_trace(const std::vector<trace_source>& sources);

/// The thread an event is drawn on before any move for nesting: 1 compute stream (compute,
/// merges, waits), 2 collectives, 100 + tag sends, 200 + tag receives (tags clamped to 0..99).
int trace_thread(const trace::event& e);

} // namespace ringscale::analysis
