// ZeRO-1's ring reduce-scatter (jobs/schemes/ring_reduce_scatter) at np = 1, 2, 4: against
// the communicator's blocking reduce_scatter on integer-valued floats (every sum exact, so the
// ring's order cannot hide a wrong block), several requests in flight together under their
// own tags and moved by test() alone, by wait(), and by destroying them unfinished.
#include "comm/communicator.hpp"
#include "jobs/schemes/ring_reduce_scatter.hpp"
#include "tests/support/requests_by_test.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace ringscale;
namespace schemes = ringscale::jobs::schemes;

namespace {

std::unique_ptr<comm::communicator> world() {
    return comm::make_world(comm_kind::mpi, comm::memory_space::host);
}

// Rank r's input of request k: small integers, different on every rank, block and request.
std::vector<float> input(int rank, int k, std::size_t n, int ranks) {
    std::vector<float> v(n * static_cast<std::size_t>(ranks));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 13 +
                                                    static_cast<std::size_t>(k) * 5) %
                                                   23) -
                                  11);
    return v;
}

struct ring_case {
    std::vector<float> send, recv, scratch, want;
};

ring_case make_case(comm::communicator& c, int k, std::size_t n) {
    ring_case x;
    x.send = input(c.rank(), k, n, c.size());
    x.recv.assign(n, -999.0f);
    x.scratch.resize(schemes::ring_scratch_floats(n, c.size()));
    x.want.resize(n);
    c.reduce_scatter(x.send.data(), x.want.data(), n, comm::dtype::f32, comm::reduce_op::sum);
    return x;
}

} // namespace

TEST(ring_reduce_scatter, scratch_is_two_pieces_past_two_ranks) {
    EXPECT_EQ(schemes::ring_scratch_floats(10, 1), 0u);
    EXPECT_EQ(schemes::ring_scratch_floats(10, 2), 0u);
    EXPECT_EQ(schemes::ring_scratch_floats(10, 3), 20u);
    EXPECT_EQ(schemes::ring_scratch_floats(10, 8), 20u);
}

TEST(ring_reduce_scatter, equals_the_communicators_reduce_scatter) {
    auto c = world();
    for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{4099}}) {
        SCOPED_TRACE("count per rank " + std::to_string(n));
        ring_case x = make_case(*c, 0, n);
        auto req =
            schemes::ring_reduce_scatter(*c, x.send.data(), x.recv.data(), n, x.scratch.data(), 7);
        req->wait();
        EXPECT_TRUE(req->test());
        EXPECT_EQ(x.recv, x.want);
    }
}

TEST(ring_reduce_scatter, requests_in_flight_together_complete_by_test_alone) {
    auto c = world();
    constexpr int k = 3;
    std::vector<ring_case> xs;
    std::vector<comm::request_ptr> reqs;
    for (int i = 0; i < k; ++i)
        xs.push_back(make_case(*c, i, 1000 + static_cast<std::size_t>(i)));
    for (int i = 0; i < k; ++i) {
        auto& x = xs[static_cast<std::size_t>(i)];
        reqs.push_back(schemes::ring_reduce_scatter(*c, x.send.data(), x.recv.data(), x.recv.size(),
                                                    x.scratch.data(), 100 + i));
    }
    testing_support::complete_by_test_alone(reqs);
    for (const auto& x : xs)
        EXPECT_EQ(x.recv, x.want);
}

TEST(ring_reduce_scatter, destroying_an_unfinished_request_completes_it) {
    auto c = world();
    ring_case x = make_case(*c, 1, 777);
    {
        auto req = schemes::ring_reduce_scatter(*c, x.send.data(), x.recv.data(), 777,
                                                x.scratch.data(), 9);
    } // neither waited for nor tested
    EXPECT_EQ(x.recv, x.want);
}
