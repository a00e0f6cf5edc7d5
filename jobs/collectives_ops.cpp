#include "jobs/collectives_ops.hpp"

#include "src/error.hpp"

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
    return {n * sizeof(float), n, n, n};
}
// Output (allgather) or input (reduce-scatter, all-to-all) of `ranks` equal blocks.
collective_sizes gathered_output(std::uint64_t bytes, int ranks) {
    const std::size_t per = bytes / sizeof(float) / static_cast<std::size_t>(ranks);
    const std::size_t total = per * static_cast<std::size_t>(ranks);
    return {total * sizeof(float), per, per, total};
}
collective_sizes scattered_input(std::uint64_t bytes, int ranks) {
    collective_sizes s = gathered_output(bytes, ranks);
    std::swap(s.send_count, s.recv_count);
    return s;
}
collective_sizes all_to_all_sizes(std::uint64_t bytes, int ranks) {
    collective_sizes s = gathered_output(bytes, ranks);
    s.send_count = s.recv_count;
    return s;
}

std::uint64_t wrong_where(const float* recv, std::size_t n,
                          float (*expected)(std::size_t, int, int, int), int rank, int ranks,
                          int root) {
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        wrong += recv[i] != expected(i, rank, ranks, root);
    return wrong;
}

float sum_over_ranks(std::size_t i, int ranks) {
    float s = 0;
    for (int q = 0; q < ranks; ++q)
        s += collective_value(q, i);
    return s;
}

const std::vector<collective_op> k_ops = {
    {"allreduce", factor_allreduce, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz, int) {
         c.allreduce(s, r, sz.count, dtype::f32, reduce_op::sum);
     },
     [](int rank, int ranks, const float* r, const collective_sizes& sz, int root) {
         return wrong_where(
             r, sz.recv_count, [](std::size_t i, int, int p, int) { return sum_over_ranks(i, p); },
             rank, ranks, root);
     }},
    {"allgather", factor_gather, gathered_output,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz, int) {
         c.all_gather(s, r, sz.count, dtype::f32);
     },
     [](int, int ranks, const float* r, const collective_sizes& sz, int) {
         std::uint64_t wrong = 0;
         for (int q = 0; q < ranks; ++q)
             for (std::size_t i = 0; i < sz.count; ++i)
                 wrong += r[q * sz.count + i] != collective_value(q, i);
         return wrong;
     }},
    {"reduce_scatter", factor_gather, scattered_input,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz, int) {
         c.reduce_scatter(s, r, sz.count, dtype::f32, reduce_op::sum);
     },
     [](int rank, int ranks, const float* r, const collective_sizes& sz, int) {
         std::uint64_t wrong = 0;
         for (std::size_t i = 0; i < sz.count; ++i)
             wrong += r[i] != sum_over_ranks(rank * sz.count + i, ranks);
         return wrong;
     }},
    {"alltoall", factor_gather, all_to_all_sizes,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz, int) {
         c.all_to_all(s, r, sz.count, dtype::f32);
     },
     [](int rank, int ranks, const float* r, const collective_sizes& sz, int) {
         std::uint64_t wrong = 0; // block q came from rank q's block `rank`
         for (int q = 0; q < ranks; ++q)
             for (std::size_t i = 0; i < sz.count; ++i)
                 wrong += r[q * sz.count + i] != collective_value(q, rank * sz.count + i);
         return wrong;
     }},
    {"sendrecv", factor_one, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz, int) {
         const int p = c.size(), me = c.rank();
         c.isendrecv(s, sz.count, (me + 1) % p, r, sz.count, (me + p - 1) % p, dtype::f32, 11)
             ->wait();
     },
     [](int rank, int ranks, const float* r, const collective_sizes& sz, int) {
         std::uint64_t wrong = 0;
         for (std::size_t i = 0; i < sz.count; ++i)
             wrong += r[i] != collective_value((rank + ranks - 1) % ranks, i);
         return wrong;
     }},
    {"broadcast", factor_one, whole_buffer,
     [](comm::communicator& c, const float* s, float* r, const collective_sizes& sz, int root) {
         // The root broadcasts its input buffer (left unchanged); the others receive.
         void* buf = c.rank() == root ? const_cast<float*>(s) : r;
         c.broadcast(buf, sz.count, dtype::f32, root);
     },
     [](int rank, int, const float* r, const collective_sizes& sz, int root) {
         std::uint64_t wrong = 0;
         if (rank != root)
             for (std::size_t i = 0; i < sz.count; ++i)
                 wrong += r[i] != collective_value(root, i);
         return wrong;
     }},
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
                ops.push_back(&op);
        } else {
            ops.push_back(&find_op(n));
        }
    }
    return ops;
}

} // namespace ringscale::jobs
