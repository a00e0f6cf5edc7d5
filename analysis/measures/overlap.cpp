#include "analysis/measures/overlap.hpp"

#include "analysis/cases/cases.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace ringscale::analysis {

namespace {

using span = std::pair<double, double>;

std::string format_seconds(double s) {
    return s >= 1e-3 ? fmt::format("{:.2f} ms", s * 1e3) : fmt::format("{:.1f} us", s * 1e6);
}

// The union of `spans` as sorted, disjoint spans.
std::vector<span> merged(std::vector<span> spans) {
    std::sort(spans.begin(), spans.end());
    std::vector<span> out;
    for (const span& s : spans) {
        if (s.second <= s.first)
            continue;
        if (!out.empty() && s.first <= out.back().second)
            out.back().second = std::max(out.back().second, s.second);
        else
            out.push_back(s);
    }
    return out;
}

// The wait of `rank` ending last at or before `t` (with a little slack for clock reads).
const trace::event* last_wait(const std::vector<trace::event>& events, int rank, double t) {
    const trace::event* best = nullptr;
    for (const trace::event& e : events)
        if (e.rank == rank && e.what == trace::kind::wait && e.end_s <= t + 1e-6 &&
            e.end_s > e.start_s && (!best || e.end_s > best->end_s))
            best = &e;
    return best;
}

// The step `rank` was in at time `t`: the latest compute or wait event starting before it.
int step_at(const std::vector<trace::event>& events, int rank, double t) {
    const trace::event* best = nullptr;
    for (const trace::event& e : events)
        if (e.rank == rank && !trace::is_transfer(e.what) && e.start_s <= t &&
            (!best || e.start_s > best->start_s))
            best = &e;
    return best ? best->step : -1;
}

// From the rank that ended last, back through each wait to the sender that posted late.
std::vector<critical_hop> critical_path(const std::vector<trace::event>& events, int rank, double t,
                                        double length_s) {
    std::vector<critical_hop> path;
    const auto pairs = trace::pair_transfers(events);
    for (int hop = 0; hop < 64; ++hop) {
        critical_hop h{rank, step_at(events, rank, t), t, "compute"};
        const trace::event* w = last_wait(events, rank, t);
        // A wait that is a sliver of the iteration did not set its length.
        if (!w || w->end_s - w->start_s < 0.02 * length_s) {
            path.push_back(h);
            break;
        }
        h.step = w->step;
        h.at_s = w->end_s;
        // The receive this wait ended with, and its send.
        const trace::event* send = nullptr;
        const trace::event* recv = nullptr;
        for (const auto& [si, ri] : pairs) {
            const trace::event& r = events[ri];
            if (r.rank == rank && r.end_s <= w->end_s + 1e-6 && r.end_s >= w->start_s - 1e-6 &&
                (!recv || r.end_s > recv->end_s)) {
                recv = &r;
                send = &events[si];
            }
        }
        if (recv && h.step < 0)
            h.step = recv->step; // a wait after the steps (the last sum home) is its receive's
        if (!send || send->start_s <= recv->start_s) { // posted in time: the link was slow
            h.cause = "transfer";
            path.push_back(h);
            break;
        }
        h.cause = "sender";
        path.push_back(h);
        rank = send->rank;
        t = send->start_s;
    }
    return path;
}

} // namespace

double union_length(std::vector<span> spans) {
    double total = 0;
    for (const span& s : merged(std::move(spans)))
        total += s.second - s.first;
    return total;
}

double intersection_length(std::vector<span> a, std::vector<span> b) {
    const std::vector<span> x = merged(std::move(a)), y = merged(std::move(b));
    double total = 0;
    std::size_t j = 0;
    for (const span& s : x) {
        while (j < y.size() && y[j].second <= s.first)
            ++j;
        for (std::size_t k = j; k < y.size() && y[k].first < s.second; ++k)
            total += std::min(s.second, y[k].second) - std::max(s.first, y[k].first);
    }
    return total;
}

overlap_summary summarize_overlap(const std::vector<trace::event>& events) {
    overlap_summary out;
    std::map<int, std::vector<span>> compute; // rank -> compute spans
    std::map<std::pair<int, int>, std::vector<span>> transfers;
    std::map<std::pair<int, int>, step_overlap> steps;
    for (const trace::event& e : events) {
        if (e.end_s > out.length_s) {
            out.length_s = e.end_s;
            out.last_rank = e.rank;
        }
        const std::pair<int, int> key{e.rank, e.step};
        step_overlap& s = steps[key];
        s.rank = e.rank;
        s.step = e.step;
        const double d = e.end_s - e.start_s;
        if (trace::is_compute(e.what)) {
            compute[e.rank].emplace_back(e.start_s, e.end_s);
            s.compute_s += d;
        } else if (e.what == trace::kind::wait) {
            s.wait_s += d;
            if (e.op == trace::kind::all_to_all) // blocking: the wait is the transfer
                transfers[key].emplace_back(e.start_s, e.end_s);
        } else {
            transfers[key].emplace_back(e.start_s, e.end_s);
            s.bytes += e.bytes;
        }
    }
    for (auto& [key, s] : steps) {
        const auto t = transfers.find(key);
        if (t == transfers.end())
            continue;
        s.transfer_s = union_length(t->second);
        s.overlapped_s = intersection_length(t->second, compute[key.first]);
        s.exposed_s = std::max(0.0, s.transfer_s - s.overlapped_s);
    }
    for (auto& [key, s] : steps)
        out.steps.push_back(s);
    out.path = critical_path(events, out.last_rank, out.length_s, out.length_s);
    return out;
}

const step_overlap* overlap_summary::worst() const {
    const step_overlap* best = nullptr;
    for (const step_overlap& s : steps)
        if (s.transfer_s > 0 && (!best || s.exposed_s > best->exposed_s))
            best = &s;
    return best;
}

std::string worst_step_text(const overlap_summary& s) {
    const step_overlap* w = s.worst();
    if (!w)
        return "";
    const double share = w->transfer_s > 0 ? w->exposed_s / w->transfer_s : 0;
    return fmt::format("rank {}{}: {} of {} transfer exposed ({:.0f}%)", w->rank,
                       w->step >= 0 ? fmt::format(" step {}", w->step) : std::string(),
                       format_seconds(w->exposed_s), format_seconds(w->transfer_s), 100 * share);
}

std::string critical_path_text(const overlap_summary& s) {
    std::string out;
    for (const critical_hop& h : s.path) {
        if (!out.empty())
            out += " <- ";
        out += fmt::format("rank {}{} ({})", h.rank,
                           h.step >= 0 ? fmt::format(" step {}", h.step) : std::string(),
                           h.cause == "sender"     ? "waited for a late sender"
                           : h.cause == "transfer" ? "waited for the link"
                                                   : "compute");
    }
    return out;
}

std::vector<const case_data*> traced_cases(const std::vector<case_data>& cases,
                                           const std::string& filter) {
    std::vector<const case_data*> out;
    for (const case_data& c : cases)
        if (!c.trace.empty() &&
            (filter.empty() || case_label(c, true).find(filter) != std::string::npos))
            out.push_back(&c);
    return out;
}

std::vector<traced_iteration> traced_iterations(const case_data& c) {
    std::vector<traced_iteration> out;
    if (c.trace.empty())
        return out;
    const std::vector<trace::event> all = trace::from_columns(c.trace); // checked on reading
    const auto col = [&](const char* name) {
        const auto it = c.trace.find(name);
        return it == c.trace.end() ? std::vector<double>{} : it->second;
    };
    const auto rows = col("kept_iteration"), reasons = col("kept_reason"),
               skews = col("kept_skew_s"), dropped = col("kept_dropped"), hosts = col("rank_host");
    for (std::size_t k = 0; k < rows.size(); ++k) {
        traced_iteration it;
        it.row = static_cast<int>(rows[k]);
        it.reason = k < reasons.size() && reasons[k] == 1 ? "slowest" : "median";
        it.skew_s = k < skews.size() ? skews[k] : 0;
        it.dropped = k < dropped.size() ? dropped[k] : 0;
        for (const double h : hosts)
            it.rank_host.push_back(static_cast<int>(h));
        for (const trace::event& e : all)
            if (e.iteration == it.row)
                it.events.push_back(e);
        out.push_back(std::move(it));
    }
    return out;
}

} // namespace ringscale::analysis
