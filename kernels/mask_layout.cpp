#include "kernels/mask_layout.hpp"

#include "kernels/mask_count.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace ringscale::kernels {

namespace {

bool has_docs(const attention_mask* mask) {
    return mask != nullptr && mask->doc_starts().size() > 1;
}

// Tokens per unit of the balanced layout: the sparse block, else S/(4P).
std::int64_t balance_unit(std::int64_t seq_len, int ranks, const attention_mask* mask) {
    if (mask != nullptr && !mask->keep().empty())
        return mask->spec().block;
    return std::max<std::int64_t>(1, seq_len / (4 * std::int64_t{ranks}));
}

std::vector<std::vector<std::int64_t>> zigzag_per_doc(const std::vector<std::int64_t>& starts,
                                                      int ranks) {
    std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(ranks));
    const std::int64_t parts = 2 * std::int64_t{ranks};
    for (std::size_t d = 0; d + 1 < starts.size(); ++d) {
        const std::int64_t chunk = (starts[d + 1] - starts[d]) / parts;
        for (int r = 0; r < ranks; ++r)
            for (const std::int64_t c : {std::int64_t{r}, parts - 1 - r})
                for (std::int64_t i = 0; i < chunk; ++i)
                    out[static_cast<std::size_t>(r)].push_back(starts[d] + c * chunk + i);
    }
    for (auto& p : out)
        std::sort(p.begin(), p.end());
    return out;
}

std::vector<std::vector<std::int64_t>> balanced(std::int64_t seq_len, int ranks, bool causal,
                                                const attention_mask* mask) {
    const std::int64_t unit = balance_unit(seq_len, ranks, mask);
    const std::int64_t units = seq_len / unit, per_rank = units / ranks;
    const mask_view view = mask != nullptr ? mask->view() : mask_view{};
    const std::vector<std::int64_t> all = all_positions(seq_len);
    std::vector<std::int64_t> work(static_cast<std::size_t>(units));
    for (std::int64_t u = 0; u < units; ++u)
        work[static_cast<std::size_t>(u)] =
            count_visible(view, causal, all.data() + u * unit, unit, all.data(), seq_len);
    std::vector<std::int64_t> order(static_cast<std::size_t>(units));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return work[static_cast<std::size_t>(a)] > work[static_cast<std::size_t>(b)];
    });
    std::vector<std::int64_t> load(static_cast<std::size_t>(ranks), 0), held(load);
    std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(ranks));
    for (const std::int64_t u : order) {
        int best = -1;
        for (int r = 0; r < ranks; ++r)
            if (held[static_cast<std::size_t>(r)] < per_rank &&
                (best < 0 ||
                 load[static_cast<std::size_t>(r)] < load[static_cast<std::size_t>(best)]))
                best = r;
        const auto b = static_cast<std::size_t>(best);
        load[b] += work[static_cast<std::size_t>(u)];
        ++held[b];
        for (std::int64_t i = 0; i < unit; ++i)
            out[b].push_back(u * unit + i);
    }
    for (auto& p : out)
        std::sort(p.begin(), p.end());
    return out;
}

} // namespace

void check_mask_layout(layout value, std::int64_t seq_len, int ranks, const attention_mask* mask) {
    check_layout(value, seq_len, ranks);
    if (value == layout::zigzag && has_docs(mask)) {
        const auto& starts = mask->doc_starts();
        const std::int64_t parts = 2 * std::int64_t{ranks};
        for (std::size_t d = 0; d + 1 < starts.size(); ++d)
            if ((starts[d + 1] - starts[d]) % parts != 0)
                throw config_error(fmt::format(
                    "--layout zigzag with --docs cuts every document into 2P = {} chunks: "
                    "document {} has {} tokens; use lengths divisible by {} or another layout",
                    parts, d, starts[d + 1] - starts[d], parts));
    }
    if (value == layout::balanced) {
        const std::int64_t unit = balance_unit(seq_len, ranks, mask);
        if (seq_len % (unit * ranks) != 0)
            throw config_error(fmt::format("--layout balanced deals units of {} tokens (the "
                                           "sparse block, else S/(4P)): the {} ranks need "
                                           "seq_len divisible by {}",
                                           unit, ranks, unit * ranks));
    }
}

std::vector<std::vector<std::int64_t>> mask_layout_positions(layout value, std::int64_t seq_len,
                                                             int ranks, bool causal,
                                                             const attention_mask* mask) {
    check_mask_layout(value, seq_len, ranks, mask);
    if (value == layout::zigzag && has_docs(mask))
        return zigzag_per_doc(mask->doc_starts(), ranks);
    if (value == layout::balanced)
        return balanced(seq_len, ranks, causal, mask);
    std::vector<std::vector<std::int64_t>> out;
    for (int r = 0; r < ranks; ++r)
        out.push_back(layout_positions(value, seq_len, ranks, r));
    return out;
}

} // namespace ringscale::kernels
