// The one recorder of device events behind --profile and --trace on a GPU. Spans are opened
// and closed around operations on a stream (the compute stream, or a communicator's, e.g.
// NCCL's), each end a pooled event recorded in that stream's order; after the iteration one
// host sync reads every event's time from the iteration's start event (recorded on the compute
// stream after the barrier) and turns each span into the host records the CPU path produces:
// seconds per operation into an op_profile, and trace::events on the host clock's base
// (host start of the iteration + the event's time from the start event) into a trace recorder.
// One recorder, two consumers. The pool is bounded: a span that finds it full is dropped and
// counted. Free of CUDA: the events themselves are an event_clock (kernels/cuda/event_pool on
// the GPU, fake timestamps in the unit tests). One per executor, one recording thread.
#pragma once

#include "src/base/trace_events.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::kernels {

class op_profile;

/// The events a GPU's recorder pools per iteration at most: 32767 spans and the start and end.
inline constexpr std::size_t device_events_max = 1u << 16;

/// What records and reads the events of a recorder's pool.
class event_clock {
  public:
    virtual ~event_clock() = default;
    /// Record pooled event `slot` on `stream` (a cudaStream_t; nullptr: the compute stream),
    /// in that stream's order.
    virtual void record(std::size_t slot, void* stream) = 0;
    /// Block until events [0, n) have happened (one host sync); the seconds from event 0 to
    /// each of them.
    virtual std::vector<double> elapsed_s(std::size_t n) = 0;
};

/// What a span is for: an operation of the profile (op >= 0: an op_kind), an event of the
/// trace (traced: `event`'s kind, step, layer, peer... with its times set at resolution), or
/// both.
struct span_label {
    int op = -1;
    bool traced = false;
    trace::event event;
};

/// A span after resolution: seconds from the iteration's start event, and its stream (0 the
/// compute stream, then the others in the order of their first span).
struct resolved_span {
    double start_s = 0;
    double end_s = 0;
    int stream = 0;
    span_label label;
};

/// One iteration as resolved.
struct resolved_iteration {
    std::vector<resolved_span> spans; ///< in the order they were opened
    /// The start event to the latest event (the end, or a span's end on another stream).
    double span_s = 0;
    std::uint64_t dropped = 0; ///< spans the full pool refused this iteration
};

class event_recorder {
  public:
    /// At most `max_events` pooled events per iteration (two per span, one start, one end).
    event_recorder(event_clock& clock, std::size_t max_events);

    /// An iteration starts: after its barrier, at `host_start_s` on now_s(). Its trace events go
    /// to `trace` (null: none). Records the start event when a consumer is attached. What an
    /// earlier iteration left unresolved is discarded.
    void begin_iteration(double host_start_s, trace::recorder* trace);
    /// Seconds per operation of this iteration go to `profile` (null: none); records the start
    /// event now when begin_iteration did not.
    void attach(op_profile* profile);
    /// Whether this iteration has a consumer (spans are recorded).
    bool active() const { return m_profile != nullptr || m_trace != nullptr; }
    bool tracing() const { return m_trace != nullptr; }
    bool profiling() const { return m_profile != nullptr; }

    /// Open a span on `stream` (nullptr: compute): records its start event. Returns its token,
    /// npos when inactive or the pool is full (counted in dropped()).
    std::size_t open(void* stream = nullptr);
    /// Close span `token` (npos: nothing): records its end event on the span's stream.
    void close(std::size_t token, const span_label& what);

    /// After the iteration: records the end event, reads every event (one host sync), gives
    /// each closed span to the consumers, detaches them and empties the pool. Nothing (an empty
    /// iteration) when no start event was recorded.
    resolved_iteration resolve();

    /// Spans dropped over the recorder's life.
    std::uint64_t dropped() const { return m_dropped_total; }
    std::size_t max_events() const { return m_max; }

    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  private:
    struct span {
        std::size_t start = 0, end = 0; // slots
        int stream = 0;
        bool closed = false;
        span_label label;
    };
    void start_if_needed();
    void discard(); // consumers detached, pool and spans emptied
    std::size_t next_slot(void* stream);

    event_clock& m_clock;
    std::size_t m_max;
    op_profile* m_profile = nullptr;
    trace::recorder* m_trace = nullptr;
    double m_host_start_s = 0;
    bool m_started = false;
    std::size_t m_slots = 0;
    std::vector<void*> m_streams; // index = resolved stream number
    std::vector<span> m_spans;
    std::uint64_t m_dropped = 0;
    std::uint64_t m_dropped_total = 0;
};

/// The label of a span around an executor phase, as the CPU path times that phase: a wait
/// (`wait`) is the profile's communication when `r` profiles, and, when `r` traces, the trace's
/// compute or wait event named by the current trace context (trace::phase_event).
span_label phase_label(const event_recorder& r, bool wait);

/// Give `it`'s spans to the consumers: each span's seconds to its operation in `profile` (op
/// >= 0) and its event, on the host base (`host_start_s` + the span's times), to `trace`
/// (traced; counted as dropped there when its buffer is full); the iteration's span as a step
/// of `profile`, the iteration's dropped spans to both counts. Either may be null. Pure
/// but for the consumers.
void deliver(const resolved_iteration& it, double host_start_s, op_profile* profile,
             trace::recorder* trace);

/// The first way `it` is not a well-formed timeline, "" when none: a span ending before it
/// starts or outside [0, span_s], spans on one stream not in their opening order (a start
/// before an earlier span's start), two spans on one stream overlapping without nesting.
std::string timeline_fault(const resolved_iteration& it);

} // namespace ringscale::kernels
