// The device-staged MPI communicator (--comm mpi with --device cuda) on DEVICE buffers: every
// collective and point-to-point call against exact values (small integers in float, so sums
// are exact whatever the reduction order), at any rank count. Ranks may share one GPU. Every
// test skips, on every rank alike, unless every rank sees a device.
#include "comm/communicator.hpp"
#include "comm/mpi_staged_communicator.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

using namespace ringscale;
using namespace ringscale::comm;
namespace rt = ringscale::cuda_runtime;

namespace {

// Collective, so that no rank runs a test the others skip.
bool every_rank_has_a_device() {
    const int mine = rt::cuda_device_count() > 0 ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

#define RINGSCALE_SKIP_WITHOUT_DEVICE()                                                            \
    if (!every_rank_has_a_device())                                                                \
    GTEST_SKIP() << "no CUDA device visible: GPU tests need a GPU"

// Bind this rank's device (ranks share devices round-robin), then make the world.
std::unique_ptr<communicator> staged_world() {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rt::bind_local_device(rank, size, /*allow_sharing=*/true);
    return make_world(comm_kind::mpi, memory_space::device);
}

std::vector<float> iota_from(std::size_t n, float first) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = first + static_cast<float>(i);
    return v;
}

} // namespace

TEST(comm_mpi_staged, factory_gives_a_device_mpi_communicator) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto c = staged_world();
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_EQ(c->backend(), comm_kind::mpi);
    EXPECT_EQ(c->memory(), memory_space::device);
    EXPECT_EQ(c->rank(), rank);
    EXPECT_EQ(c->size(), size);
    EXPECT_NE(c->stream(), nullptr);
    c->barrier();
}

TEST(comm_mpi_staged, blocking_collectives_exact) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto c = staged_world();
    const int n = c->size(), r = c->rank();
    const std::size_t count = 1000, per = 37, un = static_cast<std::size_t>(n);

    rt::device_buffer<float> send(iota_from(count, static_cast<float>(r + 1))), recv(count);
    c->allreduce(send.data(), recv.data(), count, dtype::f32, reduce_op::sum);
    const auto sum = recv.to_host();
    for (std::size_t i = 0; i < count; ++i) // Σ_q (q + 1 + i)
        ASSERT_EQ(sum[i], static_cast<float>(n * (n + 1) / 2 + n * static_cast<int>(i)));
    c->allreduce(send.data(), send.data(), count, dtype::f32, reduce_op::max); // in place
    EXPECT_EQ(send.to_host(), iota_from(count, static_cast<float>(n)));

    rt::device_buffer<float> mine(iota_from(per, 1000.0f * r)), all(per * un);
    c->all_gather(mine.data(), all.data(), per, dtype::f32);
    const auto gathered = all.to_host();
    for (int q = 0; q < n; ++q)
        for (std::size_t i = 0; i < per; ++i)
            ASSERT_EQ(gathered[q * per + i], 1000.0f * q + i);

    // Block j of every rank's send is (j·100 + i); rank r receives n·(r·100 + i).
    std::vector<float> blocks(per * un);
    for (std::size_t j = 0; j < un; ++j)
        for (std::size_t i = 0; i < per; ++i)
            blocks[j * per + i] = static_cast<float>(j * 100 + i);
    rt::device_buffer<float> rs_send(blocks), rs_recv(per);
    c->reduce_scatter(rs_send.data(), rs_recv.data(), per, dtype::f32, reduce_op::sum);
    const auto scattered = rs_recv.to_host();
    for (std::size_t i = 0; i < per; ++i)
        ASSERT_EQ(scattered[i], static_cast<float>(n * (r * 100 + static_cast<int>(i))));

    // all_to_all: block j of rank r's send is r·10000 + j·100 + i; block q received is from q.
    for (std::size_t j = 0; j < un; ++j)
        for (std::size_t i = 0; i < per; ++i)
            blocks[j * per + i] = static_cast<float>(r * 10000 + j * 100 + i);
    rt::device_buffer<float> a2a_send(blocks), a2a_recv(per * un);
    c->all_to_all(a2a_send.data(), a2a_recv.data(), per, dtype::f32);
    const auto exchanged = a2a_recv.to_host();
    for (int q = 0; q < n; ++q)
        for (std::size_t i = 0; i < per; ++i)
            ASSERT_EQ(exchanged[q * per + i], static_cast<float>(q * 10000 + r * 100 + i));

    const int root = n - 1;
    rt::device_buffer<std::int32_t> word(std::vector<std::int32_t>(5, r == root ? 42 : -1));
    c->broadcast(word.data(), 5, dtype::i32, root);
    EXPECT_EQ(word.to_host(), std::vector<std::int32_t>(5, 42));
}

// In place (communicator.hpp's convention) on one device buffer, blocking and not: the same
// results as out of place; an in-place reduce-scatter writes only the rank's own block.
TEST(comm_mpi_staged, in_place_on_one_device_buffer) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto c = staged_world();
    const int n = c->size(), r = c->rank();
    const std::size_t per = 29, un = static_cast<std::size_t>(n), ur = static_cast<std::size_t>(r);
    std::vector<float> blocks(per * un); // block j: r·10000 + j·100 + i
    for (std::size_t j = 0; j < un; ++j)
        for (std::size_t i = 0; i < per; ++i)
            blocks[j * per + i] = static_cast<float>(r * 10000 + j * 100 + i);
    for (const bool blocking : {true, false}) {
        SCOPED_TRACE(blocking ? "blocking" : "non-blocking");
        // all_gather: the rank's input is its block of the output.
        std::vector<float> start(per * un, -1.0f);
        for (std::size_t i = 0; i < per; ++i)
            start[ur * per + i] = 1000.0f * r + i;
        rt::device_buffer<float> ag(start);
        float* own = ag.data() + ur * per;
        if (blocking)
            c->all_gather(own, ag.data(), per, dtype::f32);
        else
            c->iall_gather(own, ag.data(), per, dtype::f32)->wait();
        const auto gathered = ag.to_host();
        for (int q = 0; q < n; ++q)
            for (std::size_t i = 0; i < per; ++i)
                ASSERT_EQ(gathered[q * per + i], 1000.0f * q + i);
        // reduce_scatter: the output is the rank's block of the input; the others untouched.
        rt::device_buffer<float> rs(blocks);
        float* mine = rs.data() + ur * per;
        if (blocking)
            c->reduce_scatter(rs.data(), mine, per, dtype::f32, reduce_op::sum);
        else
            c->ireduce_scatter(rs.data(), mine, per, dtype::f32, reduce_op::sum)->wait();
        const auto scattered = rs.to_host();
        for (std::size_t j = 0; j < un; ++j)
            for (std::size_t i = 0; i < per; ++i) {
                const float want = j == ur ? static_cast<float>(10000 * n * (n - 1) / 2 +
                                                                n * static_cast<int>(j * 100 + i))
                                           : blocks[j * per + i];
                ASSERT_EQ(scattered[j * per + i], want) << "block " << j;
            }
        // allreduce: send == recv.
        rt::device_buffer<float> ar(blocks);
        if (blocking)
            c->allreduce(ar.data(), ar.data(), per * un, dtype::f32, reduce_op::min);
        else
            c->iallreduce(ar.data(), ar.data(), per * un, dtype::f32, reduce_op::min)->wait();
        const auto reduced = ar.to_host();
        for (std::size_t k = 0; k < per * un; ++k)
            ASSERT_EQ(reduced[k], blocks[k] - 10000.0f * r); // rank 0's values
    }
    // all_to_all: send == recv; block q received is from rank q.
    rt::device_buffer<float> a2a(blocks);
    c->all_to_all(a2a.data(), a2a.data(), per, dtype::f32);
    const auto exchanged = a2a.to_host();
    for (int q = 0; q < n; ++q)
        for (std::size_t i = 0; i < per; ++i)
            ASSERT_EQ(exchanged[q * per + i], static_cast<float>(q * 10000 + r * 100 + i));
}

TEST(comm_mpi_staged, nonblocking_collectives_complete_on_wait_and_test) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto c = staged_world();
    const int n = c->size(), r = c->rank();
    const std::size_t count = 4096, un = static_cast<std::size_t>(n);
    rt::device_buffer<double> ar_send(std::vector<double>(count, r + 1.0)), ar_recv(count);
    rt::device_buffer<float> ag_send(iota_from(count, 10.0f * r)), ag_recv(count * un);
    rt::device_buffer<float> rs_send(std::vector<float>(count * un, 2.0f)), rs_recv(count);
    std::vector<request_ptr> reqs;
    reqs.push_back(
        c->iallreduce(ar_send.data(), ar_recv.data(), count, dtype::f64, reduce_op::sum));
    reqs.push_back(c->iall_gather(ag_send.data(), ag_recv.data(), count, dtype::f32));
    auto rs = c->ireduce_scatter(rs_send.data(), rs_recv.data(), count, dtype::f32, reduce_op::sum);
    wait_all(reqs);
    while (!rs->test()) {
    }
    EXPECT_TRUE(rs->test()); // stays complete
    EXPECT_EQ(ar_recv.to_host(), std::vector<double>(count, n * (n + 1) / 2.0));
    const auto gathered = ag_recv.to_host();
    for (int q = 0; q < n; ++q)
        for (std::size_t i = 0; i < count; ++i)
            ASSERT_EQ(gathered[q * count + i], 10.0f * q + i);
    EXPECT_EQ(rs_recv.to_host(), std::vector<float>(count, 2.0f * n));
}

TEST(comm_mpi_staged, point_to_point_ring_and_tags) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto c = staged_world();
    const int n = c->size(), r = c->rank();
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    const std::size_t count = 513;
    rt::device_buffer<float> out(iota_from(count, 1000.0f * r)), in(count);
    c->isendrecv(out.data(), count, next, in.data(), count, prev, dtype::f32, 7)->wait();
    EXPECT_EQ(in.to_host(), iota_from(count, 1000.0f * prev));

    // Two messages to the same peer, received in the opposite tag order: tags must match.
    rt::device_buffer<float> a(std::vector<float>(count, 1.0f + r)), b(std::vector<float>(3, -r));
    rt::device_buffer<float> got_a(count), got_b(3);
    std::vector<request_ptr> reqs;
    reqs.push_back(c->irecv(got_b.data(), 3, dtype::f32, prev, 2));
    reqs.push_back(c->irecv(got_a.data(), count, dtype::f32, prev, 1));
    reqs.push_back(c->isend(a.data(), count, dtype::f32, next, 1));
    reqs.push_back(c->isend(b.data(), 3, dtype::f32, next, 2));
    wait_all(reqs);
    EXPECT_EQ(got_a.to_host(), std::vector<float>(count, 1.0f + prev));
    EXPECT_EQ(got_b.to_host(), std::vector<float>(3, static_cast<float>(-prev)));
}

TEST(comm_mpi_staged, split_keeps_device_staging) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto c = staged_world();
    auto sub = c->split(c->rank() % 2, c->rank());
    ASSERT_NE(sub, nullptr);
    EXPECT_EQ(sub->memory(), memory_space::device);
    EXPECT_EQ(sub->size(), (c->size() + 1 - c->rank() % 2) / 2);
    rt::device_buffer<std::int32_t> one(std::vector<std::int32_t>{1}), total(1);
    sub->allreduce(one.data(), total.data(), 1, dtype::i32, reduce_op::sum);
    EXPECT_EQ(total.to_host()[0], sub->size());
}

TEST(comm_mpi_staged, pinned_blocks_are_reused_across_calls) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    auto world = staged_world();
    auto* c = dynamic_cast<mpi_staged_communicator*>(world.get());
    ASSERT_NE(c, nullptr);
    const std::size_t count = std::size_t{1} << 20; // 4 MiB of float
    rt::device_buffer<float> x(std::vector<float>(count, 1.0f)), y(count);
    c->allreduce(x.data(), y.data(), count, dtype::f32, reduce_op::sum);
    const std::size_t pinned = c->pinned_bytes();
    EXPECT_GE(pinned, 2 * count * sizeof(float));
    for (int k = 0; k < 3; ++k)
        c->allreduce(x.data(), y.data(), count, dtype::f32, reduce_op::sum);
    EXPECT_EQ(c->pinned_bytes(), pinned);
    EXPECT_EQ(y.to_host(), std::vector<float>(count, static_cast<float>(c->size())));
}
