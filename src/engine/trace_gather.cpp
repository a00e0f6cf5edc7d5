#include "src/engine/trace_gather.hpp"

#include <algorithm>
#include <cmath>

namespace ringscale {

std::vector<std::pair<int, int>> kept_iterations(const results::case_record& rec, int keep) {
    const std::size_t world = static_cast<std::size_t>(std::max(rec.world, 1));
    std::vector<std::pair<double, int>> timed; // (slowest rank's time, row)
    for (int i = 0; i < rec.rows; ++i) {
        const auto row = static_cast<std::size_t>(i);
        if (row < rec.is_warmup.size() && rec.is_warmup[row])
            continue;
        if ((row + 1) * world > rec.time_s.size())
            break;
        const auto first = rec.time_s.begin() + static_cast<std::ptrdiff_t>(row * world);
        timed.emplace_back(*std::max_element(first, first + static_cast<std::ptrdiff_t>(world)), i);
    }
    std::vector<std::pair<int, int>> out;
    if (timed.empty() || keep < 1)
        return out;
    std::stable_sort(timed.begin(), timed.end());
    const int median = timed[(timed.size() - 1) / 2].second;
    out.emplace_back(median, 0);
    if (keep >= 2 && timed.back().second != median)
        out.emplace_back(timed.back().second, 1);
    return out;
}

std::vector<trace::event> rebased(const trace::recorder& r, const std::vector<int>& rows,
                                  int rank) {
    std::vector<trace::event> out;
    for (const int row : rows) {
        const double t0 = r.iteration_start_s(row);
        if (!std::isfinite(t0))
            continue;
        double last_s = t0; // the iteration's last seen point
        for (const trace::event& e : r.events())
            if (e.iteration == row)
                last_s = std::max({last_s, e.start_s, e.end_s});
        for (trace::event e : r.events()) {
            if (e.iteration != row)
                continue;
            if (e.end_s < e.start_s) // never seen complete (the iteration ended first)
                e.end_s = last_s;
            e.start_s -= t0;
            e.end_s -= t0;
            e.rank = rank;
            out.push_back(e);
        }
    }
    return out;
}

double alignment_skew_s(const std::vector<trace::event>& events, int row) {
    double skew = 0;
    for (const auto& [send, recv] : trace::pair_transfers(events))
        if (events[send].iteration == row)
            skew = std::max(skew, events[send].start_s - events[recv].end_s);
    return skew;
}

namespace {

// Every rank's `mine` (equal-width rows of doubles) on every rank (collective).
std::vector<double> gather_rows(comm::communicator& world, const std::vector<double>& mine) {
    const std::int64_t count = static_cast<std::int64_t>(mine.size());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(world.size()));
    world.all_gather(&count, counts.data(), 1, comm::dtype::i64);
    const std::int64_t most = *std::max_element(counts.begin(), counts.end());
    std::vector<double> padded(static_cast<std::size_t>(most), 0.0);
    std::copy(mine.begin(), mine.end(), padded.begin());
    std::vector<double> all(static_cast<std::size_t>(most) * counts.size());
    if (most > 0)
        world.all_gather(padded.data(), all.data(), static_cast<std::size_t>(most),
                         comm::dtype::f64);
    std::vector<double> out;
    for (std::size_t r = 0; r < counts.size(); ++r)
        out.insert(out.end(), all.begin() + static_cast<std::ptrdiff_t>(r * most),
                   all.begin() + static_cast<std::ptrdiff_t>(r * most + counts[r]));
    return out;
}

} // namespace

void gather_trace(comm::communicator& world, const trace::recorder& r, int keep,
                  const std::vector<int>& node_of, results::case_record& rec) {
    const auto kept = kept_iterations(rec, keep);
    std::vector<int> rows;
    for (const auto& k : kept)
        rows.push_back(k.first);
    const auto cols = trace::to_columns(rebased(r, rows, world.rank()));
    const auto& names = trace::column_names();
    std::vector<double> mine; // row-major: one row of column_names() values per event
    const std::size_t n = cols.empty() ? 0 : cols.begin()->second.size();
    for (std::size_t i = 0; i < n; ++i)
        for (const std::string& name : names)
            mine.push_back(cols.at(name)[i]);
    const std::vector<double> all = gather_rows(world, mine);
    std::map<std::string, std::vector<double>> out;
    for (std::size_t i = 0; i + names.size() <= all.size(); i += names.size())
        for (std::size_t c = 0; c < names.size(); ++c)
            out[names[c]].push_back(all[i + c]);
    for (const std::string& name : names)
        out[name]; // present when empty too
    double dropped = static_cast<double>(r.dropped()), total = 0;
    world.allreduce(&dropped, &total, 1, comm::dtype::f64, comm::reduce_op::sum);
    const std::vector<trace::event> events = trace::from_columns(out);
    for (const std::string& name : trace::kept_column_names())
        out[name]; // present when no iteration was kept too
    for (const auto& [row, reason] : kept) {
        out["kept_iteration"].push_back(row);
        out["kept_reason"].push_back(reason);
        out["kept_skew_s"].push_back(alignment_skew_s(events, row));
        out["kept_dropped"].push_back(total);
    }
    for (int rank = 0; rank < world.size(); ++rank)
        out["rank_host"].push_back(static_cast<std::size_t>(rank) < node_of.size()
                                       ? node_of[static_cast<std::size_t>(rank)]
                                       : 0);
    rec.trace = std::move(out);
}

} // namespace ringscale
