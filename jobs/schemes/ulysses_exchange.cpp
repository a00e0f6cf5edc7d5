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
// contiguous: hp * n rows. A packed block stores them as [B, hp, n, D]. Copies the heads of
// slice j between the two: into `packed` with `pack`, else out of it.
void copy_heads(const ulysses_layout& lay, const ulysses_tensor& t, int j, bool pack,
                unsigned char* packed) {
    const std::int64_t hp = t.heads / lay.comm->size();
    const std::size_t block = static_cast<std::size_t>(hp * lay.rows_local) * row_bytes(lay, t);
    for (std::int64_t b = 0; b < lay.batch; ++b) {
        const std::size_t seq =
            static_cast<std::size_t>((b * t.heads + j * hp) * lay.rows_local) * row_bytes(lay, t);
        unsigned char* p = packed + static_cast<std::size_t>(b) * block;
        if (pack)
            lay.dev->copy(p, static_cast<const unsigned char*>(t.src) + seq, block);
        else
            lay.dev->copy(static_cast<unsigned char*>(t.dst) + seq, p, block);
    }
}

// Moves the rows member i holds of this member's head slice of `t` between the group's
// sorted order and a packed block: out of it with `take`, else into it.
void move_rows(const ulysses_layout& lay, const ulysses_tensor& t, int i, bool take,
               unsigned char* packed) {
    const std::int64_t outer = lay.batch * (t.heads / lay.comm->size());
    const auto index = lay.index[static_cast<std::size_t>(i)].view();
    if (take)
        kernels::take_rows(*lay.dev, row_bytes(lay, t), outer, group_rows(lay), index, t.src,
                           packed);
    else
        kernels::put_rows(*lay.dev, row_bytes(lay, t), outer, group_rows(lay), index, packed,
                          t.dst);
}

// Both directions: fill send block j with `pack(t, j, block)` for every tensor in order
// (compute), the all-to-all after it (comm_wait), then unpack receive block i, which member
// i sent, with `unpack(t, i, block)` (compute).
template <class Pack, class Unpack>
void exchange(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
              ulysses_scratch& s, phase_timer& timer, Pack pack, Unpack unpack) {
    kernels::executor& dev = *lay.dev;
    const std::size_t per_rank = ulysses_bytes_per_rank(lay, tensors);
    ulysses_reserve(lay, per_rank, s);
    auto each_block = [&](unsigned char* buffer, auto&& move) {
        phase_scope compute(dev, timer, phase::compute);
        for (int j = 0; j < lay.comm->size(); ++j) {
            unsigned char* block = buffer + per_rank * static_cast<std::size_t>(j);
            for (const auto& t : tensors) {
                move(t, j, block);
                block += slice_bytes(lay, t);
            }
        }
    };
    each_block(s.send.data(), pack);
    // The all-to-all, after the packing that wrote the send block and the unpacking that last
    // read the receive block (both on the compute stream before this point).
    order_comm_after(*lay.comm, dev, dev.record());
    {
        trace::context what = trace::current(); // --trace: the wait is the all-to-all
        what.wait_for = trace::kind::all_to_all;
        what.bytes = static_cast<double>(per_rank) * (lay.comm->size() - 1);
        const trace::scope named(what);
        phase_scope wait(dev, timer, phase::comm_wait);
        lay.comm->all_to_all(s.send.data(), s.recv.data(), per_rank, comm::dtype::u8);
    }
    each_block(s.recv.data(), unpack);
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
    // Send block j: head slice j of every tensor; receive block i: member i's rows, put in
    // their places in the group's sorted order.
    exchange(
        lay, tensors, s, timer,
        [&](const ulysses_tensor& t, int j, unsigned char* b) { copy_heads(lay, t, j, true, b); },
        [&](const ulysses_tensor& t, int i, unsigned char* b) { move_rows(lay, t, i, false, b); });
}

void ulysses_to_sequence(const ulysses_layout& lay, const std::vector<ulysses_tensor>& tensors,
                         ulysses_scratch& s, phase_timer& timer) {
    // Send block j: the rows member j holds, of this member's head slice of every tensor;
    // receive block i: member i's head slice of our rows.
    exchange(
        lay, tensors, s, timer,
        [&](const ulysses_tensor& t, int j, unsigned char* b) { move_rows(lay, t, j, true, b); },
        [&](const ulysses_tensor& t, int i, unsigned char* b) { copy_heads(lay, t, i, false, b); });
}

} // namespace ringscale::jobs::schemes
