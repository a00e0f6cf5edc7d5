// The accuracy measurement's collective frame (jobs/attention_accuracy.hpp) at np = 1, 2, 4:
// fed the oracle's result (double accumulation, rounded to fp32) as if distributed, it finds
// errors at fp32's rounding; a corrupted result is seen; every rank gets the same tallies.
#include "jobs/attention_accuracy.hpp"

#include "kernels/reference/attention_ref.hpp"
#include "src/base/results_schema.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

using namespace ringscale;
using namespace ringscale::jobs;

namespace {

attention_problem problem(bool backward,
                          kernels::input_kind inputs = kernels::input_kind::uniform) {
    attention_problem pr;
    pr.seq_len = 256;
    pr.batch = 2;
    pr.heads = 2;
    pr.kv_heads = 1;
    pr.head_dim = 64;
    pr.causal = true;
    pr.backward = backward;
    pr.layout = kernels::layout::zigzag;
    pr.inputs = inputs;
    return pr;
}

/// The oracle over the whole problem, every rank alike: O, LSE, dQ [B,H,S,*], dK, dV [B,Hkv,S,D].
struct global_result {
    std::vector<float> o, lse, dq, dk, dv;
};

global_result oracle(const attention_problem& pr, std::uint64_t seed) {
    const std::int64_t s = pr.seq_len, d = pr.head_dim;
    const std::vector<std::int64_t> all = [&] {
        std::vector<std::int64_t> p(static_cast<std::size_t>(s));
        std::iota(p.begin(), p.end(), 0);
        return p;
    }();
    global_result g;
    const auto qe = static_cast<std::size_t>(pr.batch * pr.heads * s * d);
    const auto ke = static_cast<std::size_t>(pr.batch * pr.kv_heads * s * d);
    std::vector<float> q(qe), k(ke), v(ke), d_o(qe);
    fill_shard(tensor_id::q, seed, pr, 0, pr.heads, all, q.data());
    fill_shard(tensor_id::k, seed, pr, 0, pr.kv_heads, all, k.data());
    fill_shard(tensor_id::v, seed, pr, 0, pr.kv_heads, all, v.data());
    fill_shard(tensor_id::d_out, seed, pr, 0, pr.heads, all, d_o.data());
    kernels::attention_shape shape = pr.local_shape(1);
    g.o.resize(qe);
    g.lse.resize(qe / static_cast<std::size_t>(d));
    kernels::reference::attention_fwd_ref(shape, q.data(), k.data(), v.data(), all.data(),
                                          all.data(), g.o.data(), g.lse.data());
    if (pr.backward) {
        g.dq.resize(qe);
        g.dk.resize(ke);
        g.dv.resize(ke);
        kernels::reference::attention_bwd_ref(shape, q.data(), k.data(), v.data(), d_o.data(),
                                              all.data(), all.data(), g.dq.data(), g.dk.data(),
                                              g.dv.data());
    }
    return g;
}

/// Rows `mine` of a global [outer, S, width] tensor.
std::vector<float> rows_of(const std::vector<float>& global, std::int64_t outer, std::int64_t s,
                           std::int64_t width, const std::vector<std::int64_t>& mine) {
    std::vector<float> out;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t r : mine)
            out.insert(out.end(), global.begin() + (o * s + r) * width,
                       global.begin() + (o * s + r + 1) * width);
    return out;
}

local_result local_of(const attention_problem& pr, const global_result& g,
                      const std::vector<std::int64_t>& mine) {
    const std::int64_t bh = pr.batch * pr.heads, bk = pr.batch * pr.kv_heads;
    local_result r;
    r.o = rows_of(g.o, bh, pr.seq_len, pr.head_dim, mine);
    r.lse = rows_of(g.lse, bh, pr.seq_len, 1, mine);
    if (pr.backward) {
        r.dq = rows_of(g.dq, bh, pr.seq_len, pr.head_dim, mine);
        r.dk = rows_of(g.dk, bk, pr.seq_len, pr.head_dim, mine);
        r.dv = rows_of(g.dv, bk, pr.seq_len, pr.head_dim, mine);
    }
    return r;
}

accuracy_tallies measure(comm::communicator& c, const attention_problem& pr, std::int64_t sample,
                         const std::function<void(local_result&)>& corrupt = {}) {
    const auto positions = attention_positions(pr, c.size());
    const global_result g = oracle(pr, 7);
    local_result mine = local_of(pr, g, positions[static_cast<std::size_t>(c.rank())]);
    if (corrupt)
        corrupt(mine);
    const auto dev = kernels::make_executor(device_kind::cpu);
    return measure_accuracy(c, *dev, pr, 7, sample, positions, pr.mask_view(), mine);
}

double max_rel(const accuracy_tallies& t, acc_tensor x, bool single = false) {
    return (single ? t.single : t.dist)[static_cast<int>(x)].max_rel();
}

} // namespace

TEST(attention_accuracy_mpi, the_oracle_as_the_result_is_at_fp32_rounding) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    for (kernels::input_kind inputs :
         {kernels::input_kind::uniform, kernels::input_kind::outliers}) {
        SCOPED_TRACE(kernels::input_kind_name(inputs));
        const accuracy_tallies t = measure(*world, problem(true, inputs), 16);
        EXPECT_EQ(t.query_rows, 16);
        EXPECT_EQ(t.key_rows, 16);
        // O, LSE, dQ: the oracle accumulated in double and rounded once: within a unit roundoff
        // of their largest entry.
        for (acc_tensor x : {acc_tensor::o, acc_tensor::lse, acc_tensor::dq})
            EXPECT_LE(max_rel(t, x), 0x1p-24) << acc_tensor_name(x);
        // dK, dV against fp64 on the result's own LSE and delta (those rounded to fp32).
        EXPECT_LE(max_rel(t, acc_tensor::dk), 1e-6);
        EXPECT_LE(max_rel(t, acc_tensor::dv), 1e-6);
        // The single-rank fp32 kernels: real rounding error, small.
        for (int x = 0; x < acc_tensor_count; ++x) {
            EXPECT_GT(t.single[x].max_rel(), 0.0) << x;
            EXPECT_LT(t.single[x].max_rel(), 1e-5) << x;
            EXPECT_LE(t.single[x].rms_rel(), t.single[x].max_rel());
        }
        // Every rank holds the same tallies.
        double mine[2] = {max_rel(t, acc_tensor::dk, true), -max_rel(t, acc_tensor::dk, true)};
        world->allreduce(mine, mine, 2, comm::dtype::f64, comm::reduce_op::max);
        EXPECT_EQ(mine[0], -mine[1]);
        const attr_map a = t.attrs();
        EXPECT_EQ(a.count(schema::acc_attr("", "dv", "rms_rel")), 1u);
        EXPECT_EQ(a.count(schema::acc_attr("single_", "lse", "max_rel")), 1u);
    }
}

TEST(attention_accuracy_mpi, a_corrupted_result_is_seen_and_the_single_rank_is_not) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const accuracy_tallies t = measure(*world, problem(true), 32, [](local_result& r) {
        for (std::size_t i = 0; i < r.o.size(); i += 64)
            r.o[i] += 0.01f; // channel 0 of every row
        for (std::size_t i = 0; i < r.dv.size(); i += 64)
            r.dv[i] *= 1.01f;
    });
    EXPECT_GT(max_rel(t, acc_tensor::o), 1e-3);
    EXPECT_GT(max_rel(t, acc_tensor::dv), 1e-4);
    EXPECT_LT(max_rel(t, acc_tensor::o, true), 1e-5);
    EXPECT_LT(max_rel(t, acc_tensor::dv, true), 1e-5);
}

TEST(attention_accuracy_mpi, a_forward_samples_all_rows_of_a_short_sequence) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const accuracy_tallies t = measure(*world, problem(false), 1000);
    EXPECT_EQ(t.query_rows, 256);
    EXPECT_EQ(t.key_rows, 0);
    EXPECT_EQ(t.dist[static_cast<int>(acc_tensor::dq)].count, 0);
    EXPECT_EQ(t.attrs().count(schema::acc_attr("", "dq", "max_rel")), 0u);
    EXPECT_LE(max_rel(t, acc_tensor::o), 0x1p-24);
}
