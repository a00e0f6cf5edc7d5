#include "kernels/layout.hpp"

#include "src/base/error.hpp"
#include "src/base/shape_rules.hpp"

#include <algorithm>
#include <cstring>

namespace ringscale::kernels {

layout parse_layout(const std::string& text) {
    for (layout l : {layout::contiguous, layout::zigzag, layout::striped, layout::balanced})
        if (text == to_string(l))
            return l;
    throw config_error("unknown layout '" + text +
                       "' (expected contiguous, zigzag, striped or balanced)");
}

const char* to_string(layout value) {
    switch (value) {
    case layout::contiguous:
        return "contiguous";
    case layout::zigzag:
        return "zigzag";
    case layout::striped:
        return "striped";
    case layout::balanced:
        return "balanced";
    }
    return "unknown";
}

void check_layout(layout value, std::int64_t seq_len, int ranks) {
    rules::check_layout_chunks(to_string(value), seq_len, ranks); // shared with predict
}

std::vector<std::int64_t> layout_positions(layout value, std::int64_t seq_len, int ranks,
                                           int rank) {
    check_layout(value, seq_len, ranks);
    if (rank < 0 || rank >= ranks)
        throw config_error("rank " + std::to_string(rank) + " out of range for " +
                           std::to_string(ranks) + " ranks");
    const std::int64_t local = seq_len / ranks;
    std::vector<std::int64_t> pos;
    pos.reserve(static_cast<std::size_t>(local));
    switch (value) {
    case layout::contiguous:
        for (std::int64_t i = 0; i < local; ++i)
            pos.push_back(rank * local + i);
        break;
    case layout::zigzag: {
        // Chunk r (early tokens, little causal work) pairs with chunk 2P-1-r (late tokens).
        const std::int64_t chunk = seq_len / (2 * std::int64_t{ranks});
        const std::int64_t second = 2 * std::int64_t{ranks} - 1 - rank;
        for (std::int64_t i = 0; i < chunk; ++i)
            pos.push_back(rank * chunk + i);
        for (std::int64_t i = 0; i < chunk; ++i)
            pos.push_back(second * chunk + i);
        break;
    }
    case layout::striped:
        for (std::int64_t i = 0; i < local; ++i)
            pos.push_back(i * ranks + rank);
        break;
    case layout::balanced:
        throw config_error("the balanced layout depends on the mask: use mask_layout_positions");
    }
    return pos;
}

void scatter_rows(const float* global, std::int64_t outer, std::int64_t seq_len, std::int64_t dim,
                  const std::vector<std::int64_t>& pos, float* local) {
    const auto rows = static_cast<std::int64_t>(pos.size());
    const auto row_bytes = static_cast<std::size_t>(dim) * sizeof(float);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < rows; ++i)
            std::memcpy(local + (o * rows + i) * dim, global + (o * seq_len + pos[i]) * dim,
                        row_bytes);
}

void gather_rows(const float* local, std::int64_t outer, std::int64_t seq_len, std::int64_t dim,
                 const std::vector<std::int64_t>& pos, float* global) {
    const auto rows = static_cast<std::int64_t>(pos.size());
    const auto row_bytes = static_cast<std::size_t>(dim) * sizeof(float);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < rows; ++i)
            std::memcpy(global + (o * seq_len + pos[i]) * dim, local + (o * rows + i) * dim,
                        row_bytes);
}

std::int64_t visible_pairs(const std::vector<std::int64_t>& q_pos,
                           const std::vector<std::int64_t>& k_pos, bool causal) {
    if (!causal)
        return static_cast<std::int64_t>(q_pos.size() * k_pos.size());
    std::int64_t total = 0;
    for (const std::int64_t q : q_pos)
        total += std::upper_bound(k_pos.begin(), k_pos.end(), q) - k_pos.begin();
    return total;
}

} // namespace ringscale::kernels
