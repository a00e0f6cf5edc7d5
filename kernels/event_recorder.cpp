#include "kernels/event_recorder.hpp"

#include "kernels/op_profile.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::kernels {

event_recorder::event_recorder(event_clock& clock, std::size_t max_events)
    : m_clock(clock), m_max(std::max<std::size_t>(max_events, 4)) {}

void event_recorder::begin_iteration(double host_start_s, trace::recorder* trace) {
    discard();
    m_host_start_s = host_start_s;
    m_trace = trace;
    if (m_trace)
        start_if_needed();
}

void event_recorder::attach(op_profile* profile) {
    m_profile = profile;
    if (m_profile)
        start_if_needed();
}

void event_recorder::start_if_needed() {
    if (m_started)
        return;
    m_started = true;
    m_slots = 0;
    m_streams.assign(1, nullptr);
    m_clock.record(m_slots++, nullptr); // slot 0: the iteration's start, on the compute stream
}

std::size_t event_recorder::next_slot(void* stream) {
    const std::size_t slot = m_slots++;
    m_clock.record(slot, stream);
    return slot;
}

std::size_t event_recorder::open(void* stream) {
    if (!active() || !m_started)
        return npos;
    // Two slots per span, and the last one kept for the iteration's end event.
    if (m_slots + 3 > m_max) {
        ++m_dropped;
        ++m_dropped_total;
        return npos;
    }
    span s;
    const auto it = std::find(m_streams.begin(), m_streams.end(), stream);
    s.stream = static_cast<int>(it - m_streams.begin());
    if (it == m_streams.end())
        m_streams.push_back(stream);
    s.start = next_slot(stream);
    s.end = m_slots++; // reserved: close records it
    m_spans.push_back(s);
    return m_spans.size() - 1;
}

void event_recorder::close(std::size_t token, const span_label& what) {
    if (token >= m_spans.size() || m_spans[token].closed)
        return;
    span& s = m_spans[token];
    m_clock.record(s.end, m_streams[static_cast<std::size_t>(s.stream)]);
    s.closed = true;
    s.label = what;
}

resolved_iteration event_recorder::resolve() {
    resolved_iteration out;
    if (m_started) {
        for (const span& s : m_spans) // never closed: its end event recorded, the span dropped
            if (!s.closed)
                m_clock.record(s.end, m_streams[static_cast<std::size_t>(s.stream)]);
        const std::size_t end = next_slot(nullptr);
        const std::vector<double> t = m_clock.elapsed_s(m_slots);
        out.span_s = t.at(end);
        for (const span& s : m_spans)
            if (s.closed) {
                out.spans.push_back({t.at(s.start), t.at(s.end), s.stream, s.label});
                out.span_s = std::max(out.span_s, t.at(s.end)); // another stream may end later
            }
        out.dropped = m_dropped;
        deliver(out, m_host_start_s, m_profile, m_trace);
    }
    discard();
    return out;
}

void event_recorder::discard() {
    m_profile = nullptr;
    m_trace = nullptr;
    m_started = false;
    m_slots = 0;
    m_spans.clear();
    m_dropped = 0;
}

span_label phase_label(const event_recorder& r, bool wait) {
    span_label what;
    if (wait && r.profiling())
        what.op = static_cast<int>(op_kind::communication);
    what.traced = r.tracing();
    if (what.traced)
        what.event = trace::phase_event(wait);
    return what;
}

void deliver(const resolved_iteration& it, double host_start_s, op_profile* profile,
             trace::recorder* trace) {
    for (const resolved_span& s : it.spans) {
        if (profile && s.label.op >= 0 && s.label.op < static_cast<int>(op_kinds))
            profile->add(static_cast<op_kind>(s.label.op), s.end_s - s.start_s);
        if (trace && s.label.traced) {
            trace::event e = s.label.event;
            e.start_s = host_start_s + s.start_s;
            e.end_s = host_start_s + s.end_s;
            trace->add(e);
        }
    }
    if (profile) {
        profile->add_step(it.span_s);
        profile->add_dropped(it.dropped);
    }
    if (trace)
        trace->count_dropped(it.dropped);
}

std::string timeline_fault(const resolved_iteration& it) {
    std::vector<std::vector<const resolved_span*>> by_stream;
    for (std::size_t i = 0; i < it.spans.size(); ++i) {
        const resolved_span& s = it.spans[i];
        if (!(s.start_s >= 0 && s.end_s >= s.start_s && s.end_s <= it.span_s))
            return fmt::format("span {} runs {} s to {} s, outside [0, {}] or backwards", i,
                               s.start_s, s.end_s, it.span_s);
        if (s.stream < 0)
            return fmt::format("span {} has no stream", i);
        if (by_stream.size() <= static_cast<std::size_t>(s.stream))
            by_stream.resize(static_cast<std::size_t>(s.stream) + 1);
        by_stream[static_cast<std::size_t>(s.stream)].push_back(&s);
    }
    for (std::size_t k = 0; k < by_stream.size(); ++k) {
        std::vector<const resolved_span*> open; // enclosing spans, innermost last
        double last_start_s = 0;
        for (const resolved_span* s : by_stream[k]) {
            if (s->start_s < last_start_s)
                return fmt::format("stream {}: a span starts at {} s, before the span opened "
                                   "ahead of it ({} s)",
                                   k, s->start_s, last_start_s);
            last_start_s = s->start_s;
            while (!open.empty() && open.back()->end_s <= s->start_s)
                open.pop_back();
            if (!open.empty() && s->end_s > open.back()->end_s)
                return fmt::format("stream {}: span [{}, {}] s overlaps [{}, {}] s without "
                                   "nesting",
                                   k, s->start_s, s->end_s, open.back()->start_s,
                                   open.back()->end_s);
            open.push_back(s);
        }
    }
    return "";
}

} // namespace ringscale::kernels
