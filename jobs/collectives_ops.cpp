#include "jobs/collectives_ops.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::jobs {

namespace {

using comm::dtype;
using comm::reduce_op;

double factor_allreduce(int n) {
    return 2.0 * (n - 1) / n;
}
double factor_gather(int n) {
    return static_cast<double>(n - 1) / n;
}
double factor_one(int) {
    return 1.0;
}

collective_sizes whole_buffer(std::uint64_t bytes, int) {
    const std::size_t n = bytes / sizeof(float);
    collective_sizes s{n * sizeof(float), n, n, n};
    s.inplace_count = n;
    return s;
}
// Output (allgather) or input (reduce-scatter, all-to-all) of `ranks` equal blocks.
collective_sizes gathered_output(std::uint64_t bytes, int ranks) {
    const std::size_t per = bytes / sizeof(float) / static_cast<std::size_t>(ranks);
    const std::size_t total = per * static_cast<std::size_t>(ranks);
    collective_sizes s{total * sizeof(float), per, per, total};
    s.inplace_count = total;
    s.input_in_own_block = true; // in place, the rank's input is its block of the output
    return s;
}
collective_sizes scattered_input(std::uint64_t bytes, int ranks) {
    collective_sizes s = gathered_output(bytes, ranks);
    std::swap(s.send_count, s.recv_count);
    std::swap(s.input_in_own_block, s.output_in_own_block);
    return s;
}
collective_sizes all_to_all_sizes(std::uint64_t bytes, int ranks) {
    collective_sizes s = gathered_output(bytes, ranks);
    s.send_count = s.recv_count;
    s.input_in_own_block = false;
    return s;
}

/// Expected output element i on `rank`; `block` is the per-rank block size.
using expected_fn = float (*)(std::size_t i, int rank, int ranks, const collective_peers& peers,
                              std::size_t block);

float sum_over_ranks(std::size_t i, int ranks) {
    float s = 0;
    for (int q = 0; q < ranks; ++q)
        s += collective_value(q, i);
    return s;
}

float expect_allreduce(std::size_t i, int, int ranks, const collective_peers&, std::size_t) {
    return sum_over_ranks(i, ranks);
}
float expect_allgather(std::size_t i, int, int, const collective_peers&, std::size_t block) {
    return collective_value(static_cast<int>(i / block), i % block);
}
float expect_reduce_scatter(std::size_t i, int rank, int ranks, const collective_peers&,
                            std::size_t block) {
    return sum_over_ranks(static_cast<std::size_t>(rank) * block + i, ranks);
}
float expect_alltoall(std::size_t i, int rank, int, const collective_peers&, std::size_t block) {
    // Block q came from rank q's block `rank`.
    return collective_value(static_cast<int>(i / block),
                            static_cast<std::size_t>(rank) * block + i % block);
}
float expect_sendrecv(std::size_t i, int rank, int ranks, const collective_peers& peers,
                      std::size_t) {
    return collective_value((rank + ranks - peers.shift % ranks) % ranks, i);
}
float expect_broadcast(std::size_t i, int, int, const collective_peers& peers, std::size_t) {
    return collective_value(peers.root, i);
}

// Output elements [first, first + n), held in out[0..n), against `expected`.
template <expected_fn expected>
std::uint64_t check(int rank, int ranks, const float* out, std::size_t first, std::size_t n,
                    const collective_sizes& sz, const collective_peers& peers) {
    std::uint64_t wrong = 0;
    for (std::size_t k = 0; k < n; ++k)
        wrong += out[k] != expected(first + k, rank, ranks, peers, sz.count);
    return wrong;
}

std::uint64_t check_broadcast(int rank, int ranks, const float* out, std::size_t first,
                              std::size_t n, const collective_sizes& sz,
                              const collective_peers& peers) {
    // The root's output is its input (in place) or never written (out of place): not checked.
    return rank == peers.root ? 0 : check<expect_broadcast>(rank, ranks, out, first, n, sz, peers);
}

const std::vector<collective_op> k_ops = {
    {"allreduce", factor_allreduce, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) { c.allreduce(s, r, sz.count, dtype::f32, reduce_op::sum); },
     check<expect_allreduce>},
    {"allgather", factor_gather, gathered_output,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) { c.all_gather(s, r, sz.count, dtype::f32); },
     check<expect_allgather>},
    {"reduce_scatter", factor_gather, scattered_input,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) { c.reduce_scatter(s, r, sz.count, dtype::f32, reduce_op::sum); },
     check<expect_reduce_scatter>},
    {"alltoall", factor_gather, all_to_all_sizes,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) { c.all_to_all(s, r, sz.count, dtype::f32); },
     check<expect_alltoall>},
    {"sendrecv", factor_one, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers& peers) {
         const int p = c.size(), me = c.rank(), shift = peers.shift % p;
         c.isendrecv(s, sz.count, (me + shift) % p, r, sz.count, (me + p - shift) % p, dtype::f32,
                     11)
             ->wait();
     },
     check<expect_sendrecv>, false,
     "send/recv has no in-place form: a ring shift must receive into another buffer than the "
     "one it sends"},
    {"broadcast", factor_one, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers& peers) {
         const int root = peers.root;
         // Out of place the root broadcasts its input buffer (left unchanged) and the others
         // receive; in place both are the one buffer.
         void* buf = c.rank() == root ? const_cast<float*>(s) : r;
         c.broadcast(buf, sz.count, dtype::f32, root);
     },
     check_broadcast, true},
    // Nonblocking forms, as jobs call them to overlap compute (MPI runs them with other
    // algorithms than the blocking calls: libnbc in Open MPI).
    {"iallreduce", factor_allreduce, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) {
         c.iallreduce(s, r, sz.count, dtype::f32, reduce_op::sum)->wait();
     },
     check<expect_allreduce>, false, nullptr, false},
    {"iallgather", factor_gather, gathered_output,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) { c.iall_gather(s, r, sz.count, dtype::f32)->wait(); },
     check<expect_allgather>, false, nullptr, false},
    {"ireduce_scatter", factor_gather, scattered_input,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz,
        const collective_peers&) {
         c.ireduce_scatter(s, r, sz.count, dtype::f32, reduce_op::sum)->wait();
     },
     check<expect_reduce_scatter>, false, nullptr, false},
};

} // namespace

const std::vector<collective_op>& all_ops() {
    return k_ops;
}

const collective_op& find_op(const std::string& name) {
    for (const auto& op : k_ops)
        if (op.name == name)
            return op;
    std::vector<std::string> names;
    for (const auto& op : k_ops)
        names.push_back(op.name);
    throw config_error(fmt::format("--op: unknown operation '{}' (choose from {}, all)", name,
                                   fmt::join(names, ", ")));
}

std::vector<const collective_op*> ops_from_list(const std::vector<std::string>& names) {
    std::vector<const collective_op*> ops;
    for (const auto& n : names) {
        if (n == "all") {
            for (const auto& op : k_ops)
                if (op.in_all)
                    ops.push_back(&op);
        } else {
            ops.push_back(&find_op(n));
        }
    }
    return ops;
}

} // namespace ringscale::jobs
