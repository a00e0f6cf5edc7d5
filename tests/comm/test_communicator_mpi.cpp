// The MPI communicator against values every rank can compute by itself; independent of
// the rank count (run at np=1, 2, 4).
#include "comm/communicator.hpp"
#include "comm/topology.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>
#include <numeric>

using namespace ringscale;
using namespace ringscale::comm;

namespace {
std::unique_ptr<communicator> world() {
    return make_world(comm_kind::mpi, memory_space::host);
}
} // namespace

TEST(comm_mpi, allreduce_sum_and_max) {
    auto c = world();
    const int p = c->size(), r = c->rank();
    std::vector<float> in(5), out(5);
    for (int i = 0; i < 5; ++i)
        in[i] = static_cast<float>(r * 10 + i);
    c->allreduce(in.data(), out.data(), 5, dtype::f32, reduce_op::sum);
    for (int i = 0; i < 5; ++i)
        EXPECT_EQ(out[i], 10.0f * p * (p - 1) / 2 + p * i);
    c->allreduce(in.data(), out.data(), 5, dtype::f32, reduce_op::max);
    EXPECT_EQ(out[0], 10.0f * (p - 1));
    auto req = c->iallreduce(in.data(), out.data(), 5, dtype::f32, reduce_op::min);
    req->wait();
    EXPECT_EQ(out[4], 4.0f);
}

TEST(comm_mpi, all_gather_reduce_scatter_all_to_all) {
    auto c = world();
    const int p = c->size(), r = c->rank();
    std::vector<double> mine{double(r), double(r) + 0.5};
    std::vector<double> all(2 * p);
    c->all_gather(mine.data(), all.data(), 2, dtype::f64);
    for (int q = 0; q < p; ++q) {
        EXPECT_EQ(all[2 * q], q);
        EXPECT_EQ(all[2 * q + 1], q + 0.5);
    }
    std::vector<double> blocks(2 * p), got(2);
    for (int q = 0; q < p; ++q)
        blocks[2 * q] = blocks[2 * q + 1] = q; // block q holds q on every rank
    c->reduce_scatter(blocks.data(), got.data(), 2, dtype::f64, reduce_op::sum);
    EXPECT_EQ(got[0], double(r) * p);
    std::vector<std::int32_t> send(p), recv(p);
    for (int q = 0; q < p; ++q)
        send[q] = r * 100 + q; // to rank q
    c->all_to_all(send.data(), recv.data(), 1, dtype::i32);
    for (int q = 0; q < p; ++q)
        EXPECT_EQ(recv[q], q * 100 + r);
}

// In place (communicator.hpp's convention) gives what out of place gives, blocking and not.
TEST(comm_mpi, in_place_matches_out_of_place) {
    auto c = world();
    const int p = c->size(), r = c->rank();
    const std::size_t n = 3; // per rank
    const std::size_t all = n * static_cast<std::size_t>(p);
    auto input = [&](std::size_t i) { return static_cast<float>(r * 1000 + static_cast<int>(i)); };
    std::vector<float> in(all), want(all), buf(all);
    for (std::size_t i = 0; i < all; ++i)
        in[i] = input(i);
    for (bool blocking : {true, false}) {
        SCOPED_TRACE(blocking ? "blocking" : "non-blocking");
        auto run = [&](request_ptr req) {
            if (req)
                req->wait();
        };
        // allreduce: send == recv
        c->allreduce(in.data(), want.data(), all, dtype::f32, reduce_op::sum);
        buf = in;
        if (blocking)
            c->allreduce(buf.data(), buf.data(), all, dtype::f32, reduce_op::sum);
        else
            run(c->iallreduce(buf.data(), buf.data(), all, dtype::f32, reduce_op::sum));
        EXPECT_EQ(buf, want);
        // all_gather: the rank's input is its block of the output
        c->all_gather(in.data(), want.data(), n, dtype::f32);
        std::fill(buf.begin(), buf.end(), -1.0f);
        std::copy(in.begin(), in.begin() + n, buf.begin() + r * n);
        if (blocking)
            c->all_gather(buf.data() + r * n, buf.data(), n, dtype::f32);
        else
            run(c->iall_gather(buf.data() + r * n, buf.data(), n, dtype::f32));
        EXPECT_EQ(buf, want);
        // reduce_scatter: the output is the rank's block of the input
        c->reduce_scatter(in.data(), want.data(), n, dtype::f32, reduce_op::sum);
        buf = in;
        if (blocking)
            c->reduce_scatter(buf.data(), buf.data() + r * n, n, dtype::f32, reduce_op::sum);
        else
            run(c->ireduce_scatter(buf.data(), buf.data() + r * n, n, dtype::f32, reduce_op::sum));
        EXPECT_EQ(std::vector<float>(buf.begin() + r * n, buf.begin() + (r + 1) * n),
                  std::vector<float>(want.begin(), want.begin() + n));
    }
    // all_to_all: send == recv (blocking only, as the interface)
    c->all_to_all(in.data(), want.data(), n, dtype::f32);
    buf = in;
    c->all_to_all(buf.data(), buf.data(), n, dtype::f32);
    EXPECT_EQ(buf, want);
    EXPECT_TRUE(in_place_all_gather(buf.data() + r * n, buf.data(), n, dtype::f32, r));
    EXPECT_EQ(in_place_all_gather(buf.data(), buf.data(), n, dtype::f32, r), r == 0);
}

TEST(comm_mpi, ring_exchange_and_broadcast) {
    auto c = world();
    const int p = c->size(), r = c->rank();
    std::vector<float> send(3, float(r)), recv(3, -1);
    auto req =
        c->isendrecv(send.data(), 3, (r + 1) % p, recv.data(), 3, (r + p - 1) % p, dtype::f32, 7);
    req->wait();
    EXPECT_EQ(recv[2], float((r + p - 1) % p));
    std::int64_t v = r == 0 ? 1234 : 0;
    c->broadcast(&v, 1, dtype::i64, 0);
    EXPECT_EQ(v, 1234);
}

TEST(comm_mpi, split_into_even_and_odd) {
    auto c = world();
    auto sub = c->split(c->rank() % 2, c->rank());
    EXPECT_EQ(sub->size(), (c->size() + 1 - c->rank() % 2) / 2);
    EXPECT_EQ(sub->rank(), c->rank() / 2);
    int one = 1, total = 0;
    sub->allreduce(&one, &total, 1, dtype::i32, reduce_op::sum);
    EXPECT_EQ(total, sub->size());
}

TEST(comm_mpi, node_layout_by_host_name) {
    // Every rank of these tests runs on this host: one node of all ranks.
    auto c = world();
    const node_layout l = detect_node_layout(*c);
    EXPECT_EQ(l.world(), c->size());
    EXPECT_EQ(l.nodes(), 1);
    EXPECT_EQ(l.ranks_per_node(), c->size());
}

TEST(comm_mpi, unknown_and_uncompiled_backends) {
    EXPECT_THROW(make_world(parse_comm_kind("tcp"), memory_space::host), std::exception);
    if (!backend_compiled(comm_kind::nccl)) {
        EXPECT_THROW(make_world(comm_kind::nccl, memory_space::device), std::exception);
    }
    EXPECT_TRUE(backend_compiled(comm_kind::mpi));
}

// Device buffers over MPI are staged through pinned host memory where CUDA is built; without
// CUDA, or without a visible device, the factory refuses with a project error, never a crash.
TEST(comm_mpi, device_memory_mpi_is_staged_or_refused_clearly) {
    try {
        auto c = make_world(comm_kind::mpi, memory_space::device);
        EXPECT_EQ(c->backend(), comm_kind::mpi);
        EXPECT_EQ(c->memory(), memory_space::device);
    } catch (const ringscale::error& e) {
        EXPECT_TRUE(e.kind() == ringscale::error_kind::not_compiled ||
                    e.kind() == ringscale::error_kind::config)
            << e.what();
    }
}
