#include "jobs/ulysses_exchange.hpp"

#include "kernels/layout.hpp"

#include <algorithm>
#include <cstring>

namespace ringscale::jobs {

namespace {

// Elements of one member's share of `t` in a send or receive block: [B, heads/u, rows, D].
std::size_t slice_elems(const ulysses_layout& lay, const ulysses_tensor& t) {
    const std::int64_t hp = t.heads / lay.comm->size();
    return static_cast<std::size_t>(lay.batch * hp * lay.rows_local * lay.head_dim);
}

std::int64_t group_rows(const ulysses_layout& lay) {
    return static_cast<std::int64_t>(lay.group_pos.size());
}

void reserve(const ulysses_layout& lay, std::size_t per_rank, ulysses_scratch& s) {
    const std::size_t total = per_rank * static_cast<std::size_t>(lay.comm->size());
    if (s.send.size() < total)
        s.send.resize(total);
    if (s.recv.size() < total)
        s.recv.resize(total);
}

void exchange(const ulysses_layout& lay, std::size_t per_rank, ulysses_scratch& s,
              phase_timer& timer) {
    auto wait = timer.time(phase::comm_wait);
    lay.comm->all_to_all(s.send.data(), s.recv.data(), per_rank, comm::dtype::f32);
}

// Heads [first, first + hp) of batch b of a sequence-sharded [B, heads, n, D] tensor are
// contiguous: hp * n * D elements from here. A packed block stores them as [B, hp, n, D].
std::size_t seq_offset(const ulysses_layout& lay, std::int64_t heads, std::int64_t b,
                       std::int64_t first) {
    return static_cast<std::size_t>((b * heads + first) * lay.rows_local * lay.head_dim);
}
std::size_t packed_offset(const ulysses_layout& lay, std::int64_t hp, std::int64_t b) {
    return static_cast<std::size_t>(b * hp * lay.rows_local * lay.head_dim);
}
std::size_t slice_bytes(const ulysses_layout& lay, std::int64_t hp) {
    return static_cast<std::size_t>(hp * lay.rows_local * lay.head_dim) * sizeof(float);
}

} // namespace

ulysses_layout make_ulysses_layout(comm::communicator& group, std::int64_t batch,
                                   std::int64_t head_dim,
                                   const std::vector<std::vector<std::int64_t>>& member_pos) {
    ulysses_layout lay;
    lay.comm = &group;
    lay.batch = batch;
    lay.head_dim = head_dim;
    lay.rows_local = static_cast<std::int64_t>(member_pos.at(0).size());
    for (const auto& pos : member_pos)
        lay.group_pos.insert(lay.group_pos.end(), pos.begin(), pos.end());
    std::sort(lay.group_pos.begin(), lay.group_pos.end());
    for (const auto& pos : member_pos) {
        std::vector<std::int64_t> idx(pos.size());
        for (std::size_t t = 0; t < pos.size(); ++t)
            idx[t] = std::lower_bound(lay.group_pos.begin(), lay.group_pos.end(), pos[t]) -
                     lay.group_pos.begin();
        lay.index.push_back(std::move(idx));
    }
    return lay;
}

std::size_t ulysses_count_per_rank(const ulysses_layout& lay,
                                   const std::vector<ulysses_tensor>& tensors) {
    std::size_t n = 0;
    for (const auto& t : tensors)
        n += slice_elems(lay, t);
    return n;
}

void ulysses_to_heads(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                      ulysses_scratch& s, phase_timer& timer) {
    const int u = lay.comm->size();
    const std::size_t per_rank = ulysses_count_per_rank(lay, tensors);
    reserve(lay, per_rank, s);
    {
        // Block j of the send buffer: head slice j of every tensor, in tensor order.
        auto compute = timer.time(phase::compute);
        for (int j = 0; j < u; ++j) {
            float* out = s.send.data() + per_rank * static_cast<std::size_t>(j);
            for (const auto& t : tensors) {
                const std::int64_t hp = t.heads / u;
                for (std::int64_t b = 0; b < lay.batch; ++b)
                    std::memcpy(out + packed_offset(lay, hp, b),
                                t.src + seq_offset(lay, t.heads, b, j * hp), slice_bytes(lay, hp));
                out += slice_elems(lay, t);
            }
        }
    }
    exchange(lay, per_rank, s, timer);
    auto compute = timer.time(phase::compute);
    // Block i came from member i: its rows go to their places in the group's sorted order.
    for (int i = 0; i < u; ++i) {
        const float* in = s.recv.data() + per_rank * static_cast<std::size_t>(i);
        for (const auto& t : tensors) {
            kernels::gather_rows(in, lay.batch * (t.heads / u), group_rows(lay), lay.head_dim,
                                 lay.index[static_cast<std::size_t>(i)], t.dst);
            in += slice_elems(lay, t);
        }
    }
}

void ulysses_to_sequence(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                         ulysses_scratch& s, phase_timer& timer) {
    const int u = lay.comm->size();
    const std::size_t per_rank = ulysses_count_per_rank(lay, tensors);
    reserve(lay, per_rank, s);
    {
        // Block j: the rows member j holds, of this member's head slice of every tensor.
        auto compute = timer.time(phase::compute);
        for (int j = 0; j < u; ++j) {
            float* out = s.send.data() + per_rank * static_cast<std::size_t>(j);
            for (const auto& t : tensors) {
                kernels::scatter_rows(t.src, lay.batch * (t.heads / u), group_rows(lay),
                                      lay.head_dim, lay.index[static_cast<std::size_t>(j)], out);
                out += slice_elems(lay, t);
            }
        }
    }
    exchange(lay, per_rank, s, timer);
    auto compute = timer.time(phase::compute);
    // Block i holds member i's head slice of our rows.
    for (int i = 0; i < u; ++i) {
        const float* in = s.recv.data() + per_rank * static_cast<std::size_t>(i);
        for (const auto& t : tensors) {
            const std::int64_t hp = t.heads / u;
            for (std::int64_t b = 0; b < lay.batch; ++b)
                std::memcpy(t.dst + seq_offset(lay, t.heads, b, i * hp),
                            in + packed_offset(lay, hp, b), slice_bytes(lay, hp));
            in += slice_elems(lay, t);
        }
    }
}

} // namespace ringscale::jobs
