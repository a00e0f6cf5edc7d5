// A ring step as cuDNN diagonal bands (kernels/cudnn_plan.hpp). Under causal, a window and
// documents every query sees one interval of key positions, so one interval of the block's
// sorted keys; a box of cells is one band when those intervals, clipped to the box, follow two
// diagonals exactly. Each candidate is verified row by row, so a plan is exact or refused.
#include "kernels/cudnn_plan.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <tuple>

namespace ringscale::kernels {

namespace {

struct interval {
    std::int64_t lo = 0, hi = -1; // key indices, empty when lo > hi
};

// A box [i0, i1) x [j0, j1): nothing visible, one band, a band to cut at row split_at
// (cuDNN's window takes no more queries than keys), or not a band (with the reason).
struct box_fit {
    bool any = false;
    std::optional<cudnn_call> call;
    std::int64_t split_at = -1;
    std::string why;
};

interval clip(const interval& r, std::int64_t j0, std::int64_t j1) {
    return {std::max(r.lo, j0), std::min(r.hi, j1 - 1)};
}

// The band of a tight box whose rows' intervals run from diagonal lo_d to hi_d (local).
box_fit band_of(std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk,
                std::int64_t lo_d, std::int64_t hi_d) {
    box_fit f;
    f.any = true;
    cudnn_call c{q0, nq, k0, nk, {}};
    const bool no_left = lo_d <= -(nq - 1), no_right = hi_d >= nk - 1;
    if (no_left && !no_right) {
        // Causal at the bottom-right corner where that is the diagonal (as TE's ring does).
        if (hi_d == nk - nq && nk != nq)
            c.band = {cudnn_align::bottom_right, 0, 0};
        else
            c.band = {cudnn_align::top_left, 0, hi_d};
    } else if (!no_left) {
        if (nq > nk) { // rows of a band are a band: cut the rows until each piece fits
            f.split_at = q0 + nk;
            return f;
        }
        c.band = {cudnn_align::top_left, 1 - lo_d, no_right ? -1 : hi_d};
    }
    f.call = c;
    return f;
}

box_fit fit_box(const std::vector<interval>& rows, std::int64_t i0, std::int64_t i1,
                std::int64_t j0, std::int64_t j1) {
    box_fit f;
    std::int64_t first = -1, last = -1;
    std::int64_t cmin = std::numeric_limits<std::int64_t>::max(), cmax = -1;
    for (std::int64_t i = i0; i < i1; ++i) {
        const interval r = clip(rows[static_cast<std::size_t>(i)], j0, j1);
        if (r.lo > r.hi)
            continue;
        first = first < 0 ? i : first;
        last = i;
        cmin = std::min(cmin, r.lo);
        cmax = std::max(cmax, r.hi);
    }
    if (first < 0)
        return f; // nothing visible
    const std::int64_t nq = last - first + 1, nk = cmax - cmin + 1;
    std::int64_t lo_d = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi_d = std::numeric_limits<std::int64_t>::min();
    for (std::int64_t i = first; i <= last; ++i) {
        const interval r = clip(rows[static_cast<std::size_t>(i)], j0, j1);
        lo_d = std::min(lo_d, r.lo - cmin - (i - first));
        hi_d = std::max(hi_d, r.hi - cmin - (i - first));
    }
    f.any = true;
    f.why = "its visible cells are not one diagonal band";
    for (std::int64_t i = first; i <= last; ++i) {
        const interval r = clip(rows[static_cast<std::size_t>(i)], j0, j1);
        const std::int64_t li = i - first;
        if (r.lo > r.hi || r.lo - cmin != std::max<std::int64_t>(0, li + lo_d) ||
            r.hi - cmin != std::min(nk - 1, li + hi_d))
            return f;
    }
    return band_of(first, nq, cmin, nk, lo_d, hi_d);
}

// Maximal runs of rows in one document (0 documents: one), and of consecutive positions when
// `consecutive`: [start, end) indices.
std::vector<std::pair<std::int64_t, std::int64_t>>
runs_of(const std::vector<std::int64_t>& pos, const mask_view& mask, bool consecutive) {
    std::vector<std::pair<std::int64_t, std::int64_t>> runs;
    const auto n = static_cast<std::int64_t>(pos.size());
    for (std::int64_t i = 0; i < n; ++i) {
        const std::size_t u = static_cast<std::size_t>(i);
        const bool joins =
            i > 0 && (!consecutive || pos[u] == pos[u - 1] + 1) &&
            (mask.docs == 0 || mask_doc_of(mask, pos[u]) == mask_doc_of(mask, pos[u - 1]));
        if (joins)
            runs.back().second = i + 1;
        else
            runs.emplace_back(i, i + 1);
    }
    return runs;
}

using box = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

// The calls of one box into `calls` (a window's box cut by rows where it must be); false with
// `why` set when a piece is not a band.
bool fit_into(const std::vector<interval>& rows, const box& b, std::vector<cudnn_call>& calls,
              std::string& why) {
    const auto& [i0, i1, j0, j1] = b;
    const box_fit f = fit_box(rows, i0, i1, j0, j1);
    if (f.call)
        calls.push_back(*f.call);
    else if (f.split_at > 0)
        return fit_into(rows, {i0, f.split_at, j0, j1}, calls, why) &&
               fit_into(rows, {f.split_at, i1, j0, j1}, calls, why);
    else if (f.any) {
        why = "a piece that cuDNN cannot mask: " + f.why;
        return false;
    }
    return true;
}

// The calls of one cut (boxes), or nullopt with `why` set when a box is not a band or the cut
// takes more than max_calls calls.
std::optional<std::vector<cudnn_call>> calls_of(const std::vector<interval>& rows,
                                                const std::vector<box>& boxes,
                                                std::size_t max_calls, std::string& why) {
    std::vector<cudnn_call> calls;
    for (const box& b : boxes) {
        if (!fit_into(rows, b, calls, why))
            return std::nullopt;
        if (calls.size() > max_calls) {
            why = fmt::format("the mask cuts the step into more than {} cuDNN calls", max_calls);
            return std::nullopt;
        }
    }
    return calls;
}

} // namespace

const char* to_string(cudnn_align align) {
    return align == cudnn_align::bottom_right ? "bottom_right" : "top_left";
}

std::string cudnn_mask_problem(const mask_view& mask) {
    if (mask.block > 0)
        return "block-sparse masks are not cuDNN's (it takes causal, sliding-window and "
               "document masks)";
    if (mask.dilations > 0)
        return "dilated masks are not cuDNN's (it takes causal, sliding-window and document "
               "masks)";
    return "";
}

cudnn_tensor_view cudnn_q_view(const attention_shape& shape, const cudnn_call& call) {
    const std::int64_t h = shape.heads, s = shape.q_len, d = shape.head_dim;
    return {{shape.batch, h, call.q_len, d}, {h * s * d, s * d, d, 1}, call.q0 * d};
}

cudnn_tensor_view cudnn_kv_view(const attention_shape& shape, const cudnn_call& call) {
    const std::int64_t h = shape.kv_heads, s = shape.k_len, d = shape.head_dim;
    return {{shape.batch, h, call.k_len, d}, {h * s * d, s * d, d, 1}, call.k0 * d};
}

cudnn_tensor_view cudnn_stats_view(const attention_shape& shape, const cudnn_call& call) {
    const std::int64_t h = shape.heads, s = shape.q_len;
    return {{shape.batch, h, call.q_len, 1}, {h * s, s, 1, 1}, call.q0};
}

cudnn_step_plan plan_cudnn_step(const std::vector<std::int64_t>& q_pos,
                                const std::vector<std::int64_t>& k_pos, bool causal,
                                const mask_view& mask, std::size_t max_calls) {
    cudnn_step_plan plan;
    plan.fallback = cudnn_mask_problem(mask);
    if (!plan.fallback.empty())
        return plan;
    std::vector<interval> rows;
    rows.reserve(q_pos.size());
    for (const std::int64_t q : q_pos) {
        const key_range r = mask_row_range(mask, causal, q);
        const auto lo = std::lower_bound(k_pos.begin(), k_pos.end(), r.lo) - k_pos.begin();
        const auto hi = std::upper_bound(k_pos.begin(), k_pos.end(), r.hi) - k_pos.begin() - 1;
        rows.push_back({lo, hi});
    }
    const auto nq = static_cast<std::int64_t>(q_pos.size());
    const auto nk = static_cast<std::int64_t>(k_pos.size());
    // Cuts of the block, fewest calls first found: whole; per key run or per query run, the
    // runs being documents (a striped shard's rows are one run per document), then
    // consecutive positions in one document; the grid of query and key runs.
    std::vector<std::vector<box>> cuts;
    cuts.push_back({box{0, nq, 0, nk}});
    for (const bool consecutive : {false, true}) {
        const auto q_runs = runs_of(q_pos, mask, consecutive);
        const auto k_runs = runs_of(k_pos, mask, consecutive);
        std::vector<box> by_k, by_q, grid;
        for (const auto& [j0, j1] : k_runs)
            by_k.emplace_back(0, nq, j0, j1);
        for (const auto& [i0, i1] : q_runs)
            by_q.emplace_back(i0, i1, 0, nk);
        // The grid only where its boxes are few enough to look at.
        if (q_runs.size() * k_runs.size() <= max_calls * max_calls)
            for (const auto& [i0, i1] : q_runs)
                for (const auto& [j0, j1] : k_runs)
                    grid.emplace_back(i0, i1, j0, j1);
        cuts.insert(cuts.end(), {by_k, by_q, grid});
    }
    std::optional<std::vector<cudnn_call>> best;
    std::string why = "the mask cuts the step into too many pieces for cuDNN calls";
    for (const auto& cut : cuts) {
        if (best && best->size() <= 1)
            break; // nothing does better than one call
        if (cut.empty())
            continue;
        // A cut is looked at only while it can still do better than the best so far.
        std::string cut_why;
        auto calls = calls_of(rows, cut, best ? best->size() - 1 : max_calls, cut_why);
        if (calls)
            best = std::move(calls);
        else if (!best)
            why = cut_why;
    }
    if (best)
        plan.calls = std::move(*best);
    else
        plan.fallback = "a ring step cuDNN cannot take: " + why;
    return plan;
}

} // namespace ringscale::kernels
