#include "jobs/schemes/ulysses_exchange.hpp"

#include "jobs/schemes/device_exchange.hpp"

#include <algorithm>

namespace ringscale::jobs::schemes {

namespace {

using kernels::phase_scope;

std::size_t row_bytes(const ulysses_layout& lay, const ulysses_tensor& t) {
    return static_cast<std::size_t>(lay.head_dim) * t.elem_bytes;
}

// Bytes of one member's share of `t` in a send or receive block: [B, heads/u, rows, D].
std::size_t slice_bytes(const ulysses_layout& lay, const ulysses_tensor& t) {
    const std::int64_t hp = t.heads / lay.comm->size();
    return static_cast<std::size_t>(lay.batch * hp * lay.rows_local) * row_bytes(lay, t);
}

std::int64_t group_rows(const ulysses_layout& lay) {
    return static_cast<std::int64_t>(lay.group_pos.size());
}

// Heads [first, first + hp) of batch b of a sequence-sharded [B, heads, n, D] tensor are
// contiguous: hp * n rows from here. A packed block stores them as [B, hp, n, D].
std::size_t seq_offset(const ulysses_layout& lay, const ulysses_tensor& t, std::int64_t b,
                       std::int64_t first) {
    return static_cast<std::size_t>((b * t.heads + first) * lay.rows_local) * row_bytes(lay, t);
}
std::size_t packed_offset(const ulysses_layout& lay, const ulysses_tensor& t, std::int64_t hp,
                          std::int64_t b) {
    return static_cast<std::size_t>(b * hp * lay.rows_local) * row_bytes(lay, t);
}
std::size_t head_block_bytes(const ulysses_layout& lay, const ulysses_tensor& t, std::int64_t hp) {
    return static_cast<std::size_t>(hp * lay.rows_local) * row_bytes(lay, t);
}

const unsigned char* bytes(const void* p) {
    return static_cast<const unsigned char*>(p);
}
unsigned char* bytes(void* p) {
    return static_cast<unsigned char*>(p);
}

// The all-to-all, after the packing that wrote the send block and the unpacking that last
// read the receive block (both on the compute stream before this point).
void exchange(const ulysses_layout& lay, std::size_t per_rank, ulysses_scratch& s,
              phase_timer& timer) {
    order_comm_after(*lay.comm, *lay.dev, lay.dev->record());
    phase_scope wait(*lay.dev, timer, phase::comm_wait);
    lay.comm->all_to_all(s.send.data(), s.recv.data(), per_rank, comm::dtype::u8);
}

} // namespace

ulysses_layout make_ulysses_layout(comm::communicator& group, kernels::executor& dev,
                                   std::int64_t batch, std::int64_t head_dim,
                                   const std::vector<std::vector<std::int64_t>>& member_pos) {
    ulysses_layout lay;
    lay.comm = &group;
    lay.dev = &dev;
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
        lay.index.emplace_back(dev, std::move(idx));
    }
    return lay;
}

std::size_t ulysses_bytes_per_rank(const ulysses_layout& lay,
                                   const std::vector<ulysses_tensor>& tensors) {
    std::size_t n = 0;
    for (const auto& t : tensors)
        n += slice_bytes(lay, t);
    return n;
}

void ulysses_reserve(const ulysses_layout& lay, std::size_t bytes_per_rank, ulysses_scratch& s) {
    const std::size_t total = bytes_per_rank * static_cast<std::size_t>(lay.comm->size());
    if (s.send.size() < total)
        s.send.allocate(*lay.dev, total);
    if (s.recv.size() < total)
        s.recv.allocate(*lay.dev, total);
}

void ulysses_to_heads(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                      ulysses_scratch& s, phase_timer& timer) {
    kernels::executor& dev = *lay.dev;
    const int u = lay.comm->size();
    const std::size_t per_rank = ulysses_bytes_per_rank(lay, tensors);
    ulysses_reserve(lay, per_rank, s);
    {
        // Block j of the send buffer: head slice j of every tensor, in tensor order.
        phase_scope compute(dev, timer, phase::compute);
        for (int j = 0; j < u; ++j) {
            unsigned char* out = s.send.data() + per_rank * static_cast<std::size_t>(j);
            for (const auto& t : tensors) {
                const std::int64_t hp = t.heads / u;
                for (std::int64_t b = 0; b < lay.batch; ++b)
                    dev.copy(out + packed_offset(lay, t, hp, b),
                             bytes(t.src) + seq_offset(lay, t, b, j * hp),
                             head_block_bytes(lay, t, hp));
                out += slice_bytes(lay, t);
            }
        }
    }
    exchange(lay, per_rank, s, timer);
    phase_scope compute(dev, timer, phase::compute);
    // Block i came from member i: its rows go to their places in the group's sorted order.
    for (int i = 0; i < u; ++i) {
        const unsigned char* in = s.recv.data() + per_rank * static_cast<std::size_t>(i);
        for (const auto& t : tensors) {
            kernels::put_rows(dev, row_bytes(lay, t), lay.batch * (t.heads / u), group_rows(lay),
                              lay.index[static_cast<std::size_t>(i)].view(), in, t.dst);
            in += slice_bytes(lay, t);
        }
    }
}

void ulysses_to_sequence(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                         ulysses_scratch& s, phase_timer& timer) {
    kernels::executor& dev = *lay.dev;
    const int u = lay.comm->size();
    const std::size_t per_rank = ulysses_bytes_per_rank(lay, tensors);
    ulysses_reserve(lay, per_rank, s);
    {
        // Block j: the rows member j holds, of this member's head slice of every tensor.
        phase_scope compute(dev, timer, phase::compute);
        for (int j = 0; j < u; ++j) {
            unsigned char* out = s.send.data() + per_rank * static_cast<std::size_t>(j);
            for (const auto& t : tensors) {
                kernels::take_rows(dev, row_bytes(lay, t), lay.batch * (t.heads / u),
                                   group_rows(lay), lay.index[static_cast<std::size_t>(j)].view(),
                                   t.src, out);
                out += slice_bytes(lay, t);
            }
        }
    }
    exchange(lay, per_rank, s, timer);
    phase_scope compute(dev, timer, phase::compute);
    // Block i holds member i's head slice of our rows.
    for (int i = 0; i < u; ++i) {
        const unsigned char* in = s.recv.data() + per_rank * static_cast<std::size_t>(i);
        for (const auto& t : tensors) {
            const std::int64_t hp = t.heads / u;
            for (std::int64_t b = 0; b < lay.batch; ++b)
                dev.copy(bytes(t.dst) + seq_offset(lay, t, b, i * hp),
                         in + packed_offset(lay, t, hp, b), head_block_bytes(lay, t, hp));
            in += slice_bytes(lay, t);
        }
    }
}

} // namespace ringscale::jobs::schemes
