#include "src/base/trace_events.hpp"

#include "src/base/clock.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace ringscale::trace {

namespace {

recorder* g_active = nullptr;
context g_context;

constexpr const char* names[kind_count] = {"compute",    "merge",      "forward", "backward",
                                           "optimizer",  "wait",       "send",    "recv",
                                           "all_gather", "all_to_all", "reduce"};

double as_double(std::int32_t v) {
    return static_cast<double>(v);
}

std::int32_t as_int(double v, const char* what) {
    if (!std::isfinite(v) || v < -1 || v > std::numeric_limits<std::int32_t>::max())
        throw std::invalid_argument(std::string("trace column ") + what + " out of range");
    return static_cast<std::int32_t>(v);
}

kind as_kind(double v, const char* what) {
    const std::int32_t k = as_int(v, what);
    if (k < 0 || k >= kind_count)
        throw std::invalid_argument(std::string("trace column ") + what + " is not a kind");
    return static_cast<kind>(k);
}

} // namespace

const char* kind_name(kind k) {
    const auto i = static_cast<std::int32_t>(k);
    return i >= 0 && i < kind_count ? names[i] : "?";
}

bool is_transfer(kind k) {
    return k == kind::send || k == kind::recv || k == kind::all_gather || k == kind::all_to_all ||
           k == kind::reduce;
}

bool is_compute(kind k) {
    return k == kind::compute || k == kind::merge || k == kind::forward || k == kind::backward ||
           k == kind::optimizer;
}

const std::vector<std::string>& column_names() {
    static const std::vector<std::string> cols = {"kind", "start_s", "end_s", "rank", "iteration",
                                                  "step", "layer",   "peer",  "tag",  "seq",
                                                  "op",   "bytes",   "flops"};
    return cols;
}

const std::vector<std::string>& kept_column_names() {
    static const std::vector<std::string> cols = {"kept_iteration", "kept_reason", "kept_skew_s",
                                                  "kept_dropped"};
    return cols;
}

std::vector<std::pair<std::size_t, std::size_t>> pair_transfers(const std::vector<event>& events) {
    using key = std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t>;
    std::map<key, std::size_t> recvs; // (iteration, from, to, tag, seq) -> receive
    for (std::size_t i = 0; i < events.size(); ++i) {
        const event& e = events[i];
        if (e.what == kind::recv && e.peer >= 0)
            recvs.emplace(key{e.iteration, e.peer, e.rank, e.tag, e.seq}, i);
    }
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const event& e = events[i];
        if (e.what != kind::send || e.peer < 0)
            continue;
        const auto it = recvs.find(key{e.iteration, e.rank, e.peer, e.tag, e.seq});
        if (it == recvs.end())
            continue;
        out.emplace_back(i, it->second);
        recvs.erase(it); // matched once
    }
    return out;
}

std::map<std::string, std::vector<double>> to_columns(const std::vector<event>& events) {
    std::map<std::string, std::vector<double>> c;
    for (const event& e : events) {
        c["kind"].push_back(static_cast<double>(e.what));
        c["start_s"].push_back(e.start_s);
        c["end_s"].push_back(e.end_s);
        c["rank"].push_back(as_double(e.rank));
        c["iteration"].push_back(as_double(e.iteration));
        c["step"].push_back(as_double(e.step));
        c["layer"].push_back(as_double(e.layer));
        c["peer"].push_back(as_double(e.peer));
        c["tag"].push_back(as_double(e.tag));
        c["seq"].push_back(as_double(e.seq));
        c["op"].push_back(static_cast<double>(e.op));
        c["bytes"].push_back(e.bytes);
        c["flops"].push_back(e.flops);
    }
    return c;
}

std::vector<event> from_columns(const std::map<std::string, std::vector<double>>& c) {
    std::size_t n = 0;
    for (const std::string& name : column_names()) {
        const auto it = c.find(name);
        if (it == c.end())
            throw std::invalid_argument("trace column " + name + " is missing");
        if (name == column_names().front())
            n = it->second.size();
        else if (it->second.size() != n)
            throw std::invalid_argument("trace column " + name + " has another length");
    }
    std::vector<event> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        event& e = out[i];
        e.what = as_kind(c.at("kind")[i], "kind");
        e.start_s = c.at("start_s")[i];
        e.end_s = c.at("end_s")[i];
        if (!std::isfinite(e.start_s) || !std::isfinite(e.end_s) || e.end_s < e.start_s)
            throw std::invalid_argument("trace event with end before start or not finite");
        e.rank = as_int(c.at("rank")[i], "rank");
        e.iteration = as_int(c.at("iteration")[i], "iteration");
        e.step = as_int(c.at("step")[i], "step");
        e.layer = as_int(c.at("layer")[i], "layer");
        e.peer = as_int(c.at("peer")[i], "peer");
        e.tag = as_int(c.at("tag")[i], "tag");
        e.seq = as_int(c.at("seq")[i], "seq");
        e.op = as_kind(c.at("op")[i], "op");
        e.bytes = c.at("bytes")[i];
        e.flops = c.at("flops")[i];
        if (!std::isfinite(e.bytes) || !std::isfinite(e.flops))
            throw std::invalid_argument("trace event with bytes or flops not finite");
    }
    return out;
}

void recorder::begin_iteration(int iteration, double start_s) {
    m_iteration = iteration;
    m_starts[iteration] = start_s;
    m_seq.clear();
}

std::size_t recorder::add(event e) {
    if (m_iteration < 0)
        return npos;
    if (m_events.size() >= m_max) {
        ++m_dropped;
        return npos;
    }
    e.iteration = m_iteration;
    m_events.push_back(e);
    return m_events.size() - 1;
}

void recorder::complete(std::size_t index, double end_s) {
    if (index < m_events.size() && m_events[index].end_s < m_events[index].start_s)
        m_events[index].end_s = end_s;
}

std::int32_t recorder::next_seq(int peer, int tag, bool send) {
    const std::int64_t key = (static_cast<std::int64_t>(peer) << 33) ^
                             (static_cast<std::int64_t>(tag) << 1) ^ (send ? 1 : 0);
    return m_seq[key]++;
}

double recorder::iteration_start_s(int iteration) const {
    const auto it = m_starts.find(iteration);
    return it == m_starts.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

recorder* active() {
    return g_active;
}

activation::activation(recorder* r) : m_previous(g_active) {
    g_active = r;
}

activation::~activation() {
    g_active = m_previous;
}

scope::scope(const context& c) : m_previous(g_context), m_set(g_active != nullptr) {
    if (m_set)
        g_context = c;
}

scope::~scope() {
    if (m_set)
        g_context = m_previous;
}

const context& current() {
    return g_context;
}

context layer_context(kind k, int layer) {
    context c = g_context;
    c.compute = k;
    c.layer = layer;
    return c;
}

context wait_context(kind k, double bytes) {
    context c = g_context;
    c.wait_for = k;
    c.bytes = bytes;
    return c;
}

void phase_begin() {
    if (recorder* r = g_active)
        r->open_phases().push_back(now_s());
}

event phase_event(bool wait) {
    event e;
    e.what = wait ? kind::wait : g_context.compute;
    e.step = g_context.step;
    e.layer = g_context.layer;
    if (wait) {
        e.op = g_context.wait_for;
        e.bytes = g_context.bytes;
    } else {
        e.flops = g_context.flops;
    }
    return e;
}

void phase_end(bool wait) {
    recorder* r = g_active;
    if (!r || r->open_phases().empty())
        return;
    event e = phase_event(wait);
    e.start_s = r->open_phases().back();
    r->open_phases().pop_back();
    e.end_s = now_s();
    r->add(e);
}

} // namespace ringscale::trace
