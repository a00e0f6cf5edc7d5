// The event recorder behind --trace: what each rank did during an iteration, with start and
// end on the steady clock (now_s), in a bounded buffer. Off by default: with no recorder
// active every hook is one pointer test. The run loop activates one per case, marks where each
// timed iteration starts (after its barrier) and afterwards keeps the iterations it wants
// (engine/trace_gather.hpp); the CPU executor records each phase_scope (compute, waits),
// the schemes add their sends, receives and collectives and name the ring step or layer. One
// process per rank, one recording thread: not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ringscale::trace {

/// What an event is. Compute kinds run on the compute stream; send, recv and the collectives
/// are transfers from their posting to their observed completion; a wait is the compute
/// stream blocked on communication (the time comm_wait_s counts).
enum class kind : std::int32_t {
    compute,    ///< attention of one ring step (or any compute not named otherwise)
    merge,      ///< combining partial results (the ring's dK/dV sums, O rounding)
    forward,    ///< a training layer's forward
    backward,   ///< a training layer's backward
    optimizer,  ///< the optimizer step
    wait,       ///< blocked on communication
    send,       ///< a point-to-point send, posted to completed
    recv,       ///< a point-to-point receive, posted to completed
    all_gather, ///< an all-gather, posted to completed
    all_to_all, ///< an all-to-all (blocking: the same span as its wait)
    reduce,     ///< a gradient bucket's all-reduce, posted to completed
};
inline constexpr int kind_count = 11;

/// "compute", "send", ...; "?" outside the enum.
const char* kind_name(kind k);
/// Whether events of `k` are communication (send, recv, the collectives); wait is neither.
bool is_transfer(kind k);
/// Whether events of `k` run on the compute stream (compute, merge, forward, ...).
bool is_compute(kind k);

/// One recorded event. Times are now_s() seconds while recording, seconds from the start of
/// the iteration once kept (engine/trace_gather.hpp).
struct event {
    kind what = kind::compute;
    double start_s = 0;
    double end_s = 0;
    std::int32_t rank = 0;
    std::int32_t iteration = -1;
    std::int32_t step = -1;  ///< ring step (-1: none)
    std::int32_t layer = -1; ///< training layer/unit (-1: none)
    std::int32_t peer = -1;  ///< send: destination; recv: source (-1: none)
    std::int32_t tag = -1;   ///< message tag of a send/recv
    std::int32_t seq = -1;   ///< n-th send (recv) to (from) `peer` with `tag` this iteration
    kind op = kind::wait;    ///< a wait: what it waited for (recv, reduce, ...; wait: unknown)
    double bytes = 0;
    double flops = 0;
};

/// The event fields stored per case, in this order (results schema `trace` group).
const std::vector<std::string>& column_names();
/// Events as columns of doubles (column_names() order), and back. from_columns throws
/// std::invalid_argument on columns of unequal length or a kind outside the enum.
std::map<std::string, std::vector<double>> to_columns(const std::vector<event>& events);
std::vector<event> from_columns(const std::map<std::string, std::vector<double>>& columns);

/// The per-iteration columns stored beside the events (one value per kept iteration):
/// kept_iteration (its row), kept_reason (0 median, 1 slowest), kept_skew_s (the alignment's
/// remaining skew seen: the most a receive completed before its send was posted, 0 when none),
/// kept_dropped (events the bounded buffer dropped over the case).
const std::vector<std::string>& kept_column_names();

/// Each send matched to its receive: pairs of indices into `events` (send, recv) where the
/// receive is on the send's peer, from the send's rank, with its tag, sequence number and
/// iteration. Each event is in at most one pair; unmatched ones in none. Pure.
std::vector<std::pair<std::size_t, std::size_t>> pair_transfers(const std::vector<event>& events);

/// The events of the iterations being recorded, at most `max_events` (the rest counted).
class recorder {
  public:
    explicit recorder(std::size_t max_events) : m_max(max_events) {}
    /// Iteration `iteration` starts now (`start_s`, after its barrier); its events follow.
    void begin_iteration(int iteration, double start_s);
    /// No iteration: events until the next begin_iteration are not kept.
    void end_iteration() { m_iteration = -1; }
    /// Record `e` in the current iteration (its iteration set here); returns its index, or
    /// npos when outside an iteration or the buffer is full (counted in dropped()).
    std::size_t add(event e);
    /// Set the end of event `index` (from add) once, when not yet set (a completion seen).
    void complete(std::size_t index, double end_s);
    /// The next sequence number of a send to (receive from) `peer` with `tag`.
    std::int32_t next_seq(int peer, int tag, bool send);
    const std::vector<event>& events() const { return m_events; }
    std::uint64_t dropped() const { return m_dropped; }
    /// Count `n` events dropped before they reached this buffer (a device recorder's pool).
    void count_dropped(std::uint64_t n) { m_dropped += n; }
    /// The starts of the phases open now (phase_begin, phase_end).
    std::vector<double>& open_phases() { return m_open; }
    /// Where iteration `iteration` began (now_s); NaN when it was not recorded.
    double iteration_start_s(int iteration) const;

    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  private:
    std::size_t m_max;
    int m_iteration = -1;
    std::vector<event> m_events;
    std::map<int, double> m_starts;
    std::map<std::int64_t, std::int32_t> m_seq;
    std::uint64_t m_dropped = 0;
    std::vector<double> m_open;
};

/// The recorder of this process, null when not tracing.
recorder* active();
/// RAII: makes `r` (may be null) the active recorder, restoring the previous on exit.
class activation {
  public:
    explicit activation(recorder* r);
    ~activation();
    activation(const activation&) = delete;
    activation& operator=(const activation&) = delete;

  private:
    recorder* m_previous;
};

/// What the code running now is: names the compute and wait events phase_scope records.
struct context {
    kind compute = kind::compute; ///< the kind of compute phases
    kind wait_for = kind::wait;   ///< what a wait waits for
    std::int32_t step = -1;
    std::int32_t layer = -1;
    double flops = 0;
    double bytes = 0; ///< of what a wait waits for
};

/// RAII: sets fields of the current context for its lifetime (cheap; nothing when inactive).
class scope {
  public:
    explicit scope(const context& c);
    ~scope();
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

  private:
    context m_previous;
    bool m_set;
};

/// The current context.
const context& current();
/// The current context with its compute kind `k` for layer `layer`.
context layer_context(kind k, int layer);
/// The current context waiting for `k` (`bytes` of it).
context wait_context(kind k, double bytes);

/// The event phase_end records for a phase ending now, without its times: a compute event
/// (`wait` false) or a wait, named by the current context. A GPU's executor labels its phase
/// spans with it (kernels/event_recorder.hpp).
event phase_event(bool wait);

/// Called by the CPU executor as a phase (kernels' phase_scope) begins and ends, each reading
/// the clock apart from the phase's own timing: the end records a compute event (`wait`
/// false) or a wait, named by the current context. Phases nest; nothing when not tracing.
void phase_begin();
void phase_end(bool wait);

} // namespace ringscale::trace
