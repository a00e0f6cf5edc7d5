#include "analysis/presentation/trace_json.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace ringscale::analysis {

namespace {

using nlohmann::json;

constexpr int threads_per_stream = 1000; // a stream's further threads, for crossing events
constexpr int max_threads_per_stream = 32;

double us(double s) {
    return s * 1e6;
}

std::string thread_name(int tid) {
    const int base = tid % threads_per_stream, more = tid / threads_per_stream;
    std::string name = base == 1     ? "compute"
                       : base == 2   ? "collectives"
                       : base >= 200 ? fmt::format("recv (tag {})", base - 200)
                                     : fmt::format("send (tag {})", base - 100);
    return more > 0 ? fmt::format("{} #{}", name, more + 1) : name;
}

std::string event_name(const trace::event& e) {
    std::string name = trace::kind_name(e.what);
    if (e.what == trace::kind::wait && e.op != trace::kind::wait)
        name += std::string(" ") + trace::kind_name(e.op);
    if (e.step >= 0)
        name += fmt::format(" step {}", e.step);
    if (e.layer >= 0)
        name += fmt::format(" layer {}", e.layer);
    return name;
}

json event_args(const trace::event& e, const std::string& label) {
    json a = json::object();
    a["case"] = label;
    if (e.step >= 0)
        a["ring_step"] = e.step;
    if (e.layer >= 0)
        a["layer"] = e.layer;
    if (e.peer >= 0)
        a[e.what == trace::kind::send ? "to_rank" : "from_rank"] = e.peer;
    if (e.tag >= 0)
        a["tag"] = e.tag;
    if (e.bytes > 0)
        a["bytes"] = e.bytes;
    if (e.flops > 0)
        a["block_flops"] = e.flops;
    if (e.what == trace::kind::wait)
        a["waited_for"] = trace::kind_name(e.op);
    return a;
}

// Threads for the events of one process so that events on a thread are apart or nested:
// each keeps a stack of open ends; an event goes to the first thread of its stream it fits.
std::vector<int> place(const std::vector<trace::event>& ev, const std::vector<double>& end_s) {
    std::vector<std::size_t> order(ev.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return ev[a].start_s != ev[b].start_s ? ev[a].start_s < ev[b].start_s : end_s[a] > end_s[b];
    });
    std::map<int, std::vector<double>> open; // tid -> stack of ends
    std::vector<int> tid(ev.size());
    for (const std::size_t i : order) {
        for (int k = 0;; ++k) {
            const int t = trace_thread(ev[i]) + k * threads_per_stream;
            auto& stack = open[t];
            while (!stack.empty() && stack.back() <= ev[i].start_s)
                stack.pop_back();
            // A file of events that all cross each other stops at the last thread (its
            // nesting broken) instead of costing time quadratic in its events.
            if (stack.empty() || end_s[i] <= stack.back() || k + 1 == max_threads_per_stream) {
                stack.push_back(end_s[i]);
                tid[i] = t;
                break;
            }
        }
    }
    return tid;
}

} // namespace

int trace_thread(const trace::event& e) {
    const int tag = std::clamp(e.tag, 0, 99);
    switch (e.what) {
    case trace::kind::send:
        return 100 + tag;
    case trace::kind::recv:
        return 200 + tag;
    case trace::kind::all_gather:
    case trace::kind::all_to_all:
    case trace::kind::reduce:
        return 2;
    default:
        return 1;
    }
}

namespace {

// The "M" records of one process: its name, the case as its label, its order, its threads.
void add_process(json& events, int pid, int rank, int host, const std::string& label,
                 const std::map<int, bool>& tids) {
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid},
                      {"args", {{"name", fmt::format("rank {} (host {})", rank, host)}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "process_labels"}, {"pid", pid}, {"args", {{"labels", label}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", pid},
                      {"args", {{"sort_index", pid}}}});
    for (const auto& [t, unused] : tids)
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", pid},
                          {"tid", t},
                          {"args", {{"name", thread_name(t)}}}});
}

// A flow from the send's start to the end of its receive (as drawn).
void add_flow(json& events, std::int64_t id, int send_pid, int send_tid, double send_s,
              int recv_pid, int recv_tid, double recv_end_s) {
    events.push_back({{"ph", "s"},
                      {"name", "transfer"},
                      {"cat", "transfer"},
                      {"id", id},
                      {"pid", send_pid},
                      {"tid", send_tid},
                      {"ts", us(send_s)}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", "transfer"},
                      {"cat", "transfer"},
                      {"id", id},
                      {"pid", recv_pid},
                      {"tid", recv_tid},
                      {"ts", us(recv_end_s)}});
}

// One source's processes, events and flows, its processes numbered from `pid0`.
void add_source(json& events, const trace_source& src, int pid0, std::int64_t& flow_id) {
    const traced_iteration& it = *src.iteration;
    const std::vector<trace::event>& ev = it.events;
    // A receive is never drawn ending before its send began (the clocks' skew).
    std::vector<double> end_s(ev.size());
    for (std::size_t i = 0; i < ev.size(); ++i)
        end_s[i] = ev[i].end_s;
    const auto pairs = trace::pair_transfers(ev);
    for (const auto& [s, r] : pairs)
        end_s[r] = std::max(end_s[r], ev[s].start_s);
    const std::vector<int> tid = place(ev, end_s);
    std::vector<std::size_t> order(ev.size()); // by thread, then start: monotonic per thread
    for (std::size_t i = 0; i < ev.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(ev[a].rank, tid[a], ev[a].start_s) <
               std::tie(ev[b].rank, tid[b], ev[b].start_s);
    });
    std::map<int, std::map<int, bool>> threads; // rank -> tids
    for (std::size_t i = 0; i < ev.size(); ++i)
        threads[ev[i].rank][tid[i]] = true;
    for (const auto& [rank, tids] : threads) {
        const auto r = static_cast<std::size_t>(rank);
        add_process(events, pid0 + rank, rank, r < it.rank_host.size() ? it.rank_host[r] : 0,
                    src.label, tids);
    }
    for (const std::size_t i : order)
        events.push_back({{"ph", "X"},
                          {"name", event_name(ev[i])},
                          {"cat", trace::kind_name(ev[i].what)},
                          {"pid", pid0 + ev[i].rank},
                          {"tid", tid[i]},
                          {"ts", us(ev[i].start_s)},
                          {"dur", us(end_s[i] - ev[i].start_s)},
                          {"args", event_args(ev[i], src.label)}});
    for (const auto& [s, r] : pairs)
        add_flow(events, ++flow_id, pid0 + ev[s].rank, tid[s], ev[s].start_s, pid0 + ev[r].rank,
                 tid[r], end_s[r]);
}

} // namespace

json chrome_trace(const std::vector<trace_source>& sources) {
    json events = json::array();
    std::int64_t flow_id = 0;
    for (std::size_t si = 0; si < sources.size(); ++si)
        add_source(events, sources[si], static_cast<int>(si) * 65536, flow_id);
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

} // namespace ringscale::analysis
