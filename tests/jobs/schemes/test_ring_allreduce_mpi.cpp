// DDP's ring all-reduce on host memory (jobs/schemes/ring_allreduce) at np = 1, 2, 3, 4: against
// the communicator's blocking allreduce on integer-valued floats (every sum exact, so the ring's
// order cannot hide a wrong block), at counts below, at and above the rank count (blocks of
// unequal and of zero length), several requests in flight together under their own tags and
// moved by test() alone, by wait(), and by destroying them unfinished; every rank holds the
// same result.
#include "comm/communicator.hpp"
#include "jobs/schemes/ring_allreduce.hpp"
#include "tests/support/requests_by_test.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace ringscale;
namespace schemes = ringscale::jobs::schemes;

namespace {

std::unique_ptr<comm::communicator> world() {
    return comm::make_world(comm_kind::mpi, comm::memory_space::host);
}

struct allreduce_case {
    std::vector<float> send, recv, want;
};

// Rank r's input of request k: small integers, different on every rank, element and request.
allreduce_case make_case(comm::communicator& c, int k, std::size_t n) {
    allreduce_case x;
    x.send.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        x.send[i] =
            static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(c.rank()) * 13 +
                                                 static_cast<std::size_t>(k) * 5) %
                                                23) -
                               11);
    x.recv.assign(n, -999.0f);
    x.want.resize(n);
    c.allreduce(x.send.data(), x.want.data(), n, comm::dtype::f32, comm::reduce_op::sum);
    return x;
}

} // namespace

TEST(ring_allreduce, equals_the_communicators_allreduce_at_every_count) {
    auto c = world();
    const auto p = static_cast<std::size_t>(c->size());
    for (const std::size_t n : {std::size_t{1}, p - 1, p, p + 1, 3 * p + 2, std::size_t{40961}}) {
        if (n == 0)
            continue;
        SCOPED_TRACE("count " + std::to_string(n));
        allreduce_case x = make_case(*c, 0, n);
        auto req = schemes::ring_allreduce(*c, x.send.data(), x.recv.data(), n, 7);
        req->wait();
        EXPECT_TRUE(req->test());
        EXPECT_EQ(x.recv, x.want);
    }
}

TEST(ring_allreduce, every_rank_holds_the_same_bits) {
    auto c = world();
    std::vector<float> send(1001), got(1001), first(1001);
    for (std::size_t i = 0; i < send.size(); ++i) // fractions: the sum's order shows in its bits
        send[i] = 1.0f / static_cast<float>(i + 3 + 7 * static_cast<std::size_t>(c->rank()));
    schemes::ring_allreduce(*c, send.data(), got.data(), got.size(), 8)->wait();
    first = got;
    c->broadcast(first.data(), first.size(), comm::dtype::f32, 0);
    EXPECT_EQ(got, first);
}

TEST(ring_allreduce, requests_in_flight_together_complete_by_test_alone) {
    auto c = world();
    constexpr int k = 3;
    std::vector<allreduce_case> xs;
    std::vector<comm::request_ptr> reqs;
    for (int i = 0; i < k; ++i)
        xs.push_back(make_case(*c, i, 1000 + static_cast<std::size_t>(i)));
    for (int i = 0; i < k; ++i) {
        auto& x = xs[static_cast<std::size_t>(i)];
        reqs.push_back(
            schemes::ring_allreduce(*c, x.send.data(), x.recv.data(), x.recv.size(), 100 + i));
    }
    testing_support::complete_by_test_alone(reqs);
    for (const auto& x : xs)
        EXPECT_EQ(x.recv, x.want);
}

TEST(ring_allreduce, destroying_an_unfinished_request_completes_it) {
    auto c = world();
    allreduce_case x = make_case(*c, 1, 777);
    {
        auto req = schemes::ring_allreduce(*c, x.send.data(), x.recv.data(), 777, 9);
    } // neither waited for nor tested
    EXPECT_EQ(x.recv, x.want);
}
