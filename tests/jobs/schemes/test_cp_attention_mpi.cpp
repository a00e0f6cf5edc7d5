// Every context-parallel scheme of jobs/schemes called as its two callers call it, at np = 1,
// 2, 4: with keep_forward (the attention jobs: the backward follows its forward, no LSE asked
// for) and without (the training step: the forward returns the LSE, and another forward runs
// before the backward, as every layer's forward runs before the backwards). O, LSE, dQ, dK, dV
// against the reference kernel on the whole sequence (zigzag shards; causal, causal with
// packed documents, not causal; grouped-query heads), and the bytes each scheme declares
// against the bytes a counting communicator sees it send.
#include "comm/communicator.hpp"
#include "jobs/schemes/cp_attention.hpp"
#include "kernels/executor.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "src/base/error.hpp"
#include "tests/support/counting_communicator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace ringscale;
namespace schemes = ringscale::jobs::schemes;

namespace {

struct problem {
    kernels::attention_shape global; ///< the whole sequence
    std::shared_ptr<const kernels::attention_mask> mask;
    std::vector<float> q, kv, d_o; ///< global, seeded; kv = [K | V]
    std::vector<float> o, lse, dq, dkv;
};

problem make_problem(int ranks, std::int64_t kv_heads, bool causal, const std::string& docs,
                     std::uint64_t seed) {
    problem p;
    auto& s = p.global;
    s.batch = 2;
    s.heads = 4;
    s.kv_heads = kv_heads;
    s.q_len = s.k_len = 32 * ranks;
    s.head_dim = 64;
    s.causal = causal;
    if (!docs.empty()) {
        kernels::mask_spec spec;
        spec.docs = docs;
        p.mask = std::make_shared<const kernels::attention_mask>(spec, s.q_len, causal);
        s.mask = p.mask->view();
    }
    const auto qe = static_cast<std::size_t>(kernels::attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(kernels::attention_kv_elems(s));
    for (auto* t : {&p.q, &p.d_o, &p.o, &p.dq})
        t->resize(qe);
    for (auto* t : {&p.kv, &p.dkv})
        t->resize(2 * kve);
    p.lse.resize(qe / static_cast<std::size_t>(s.head_dim));
    kernels::fill_uniform(p.q.data(), qe, seed, 0);
    kernels::fill_uniform(p.kv.data(), 2 * kve, seed + 1, 0);
    kernels::fill_uniform(p.d_o.data(), qe, seed + 2, 0);
    const auto all = kernels::layout_positions(kernels::layout::contiguous, s.q_len, 1, 0);
    kernels::reference::attention_fwd_ref(s, p.q.data(), p.kv.data(), p.kv.data() + kve, all.data(),
                                          all.data(), p.o.data(), p.lse.data());
    kernels::reference::attention_bwd_ref(s, p.q.data(), p.kv.data(), p.kv.data() + kve,
                                          p.d_o.data(), all.data(), all.data(), p.dq.data(),
                                          p.dkv.data(), p.dkv.data() + kve);
    return p;
}

// Rows `pos` of every (batch, head) of a global [B, heads, S, row] tensor, and back.
std::vector<float> rows_of(const std::vector<float>& global, std::int64_t outer, std::int64_t s,
                           std::int64_t row, const std::vector<std::int64_t>& pos) {
    std::vector<float> out;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t at : pos) {
            const auto* r = global.data() + (o * s + at) * row;
            out.insert(out.end(), r, r + row);
        }
    return out;
}

// The tensors of one rank: Q, [K | V] and dO of `p` at `pos` (fp32 on the CPU executor).
struct shard {
    kernels::dev_buffer<float> q, kv, d_o, o, lse, dq, dkv;
    shard(kernels::executor& dev, const problem& p, const std::vector<std::int64_t>& pos) {
        const auto& s = p.global;
        const std::int64_t d = s.head_dim, n = s.q_len, bh = s.batch * s.heads;
        const std::int64_t bhkv = s.batch * s.kv_heads;
        const std::size_t kve = p.kv.size() / 2;
        std::vector<float> k(p.kv.begin(), p.kv.begin() + static_cast<std::ptrdiff_t>(kve));
        std::vector<float> v(p.kv.begin() + static_cast<std::ptrdiff_t>(kve), p.kv.end());
        auto kv_local = rows_of(k, bhkv, n, d, pos);
        const auto v_local = rows_of(v, bhkv, n, d, pos);
        kv_local.insert(kv_local.end(), v_local.begin(), v_local.end());
        q = kernels::dev_buffer<float>(dev, rows_of(p.q, bh, n, d, pos));
        kv = kernels::dev_buffer<float>(dev, kv_local);
        d_o = kernels::dev_buffer<float>(dev, rows_of(p.d_o, bh, n, d, pos));
        o.allocate(dev, q.size());
        dq.allocate(dev, q.size());
        lse.allocate(dev, q.size() / static_cast<std::size_t>(d));
        dkv.allocate(dev, kv.size());
    }
};

double max_err(const std::vector<float>& got, const std::vector<float>& want) {
    double err = got.size() == want.size() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
        if (!(std::isinf(want[i]) && got[i] == want[i])) // rows seeing no key: -inf both
            err = std::max(err, std::abs(static_cast<double>(got[i]) - want[i]));
    return err;
}

struct scheme_case {
    std::string variant;
    int u = 1;
    std::int64_t kv_heads = 4;
    bool causal = true;
    std::string docs;
};

// Runs `c` with and without keep_forward; checks the results and the bytes sent.
void expect_matches(const scheme_case& c) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int ranks = world->size(), me = world->rank();
    const problem p = make_problem(ranks, c.kv_heads, c.causal, c.docs, 11);
    const problem other = make_problem(ranks, c.kv_heads, c.causal, c.docs, 97);
    std::vector<std::vector<std::int64_t>> pos;
    for (int r = 0; r < ranks; ++r)
        pos.push_back(kernels::layout_positions(kernels::layout::zigzag, p.global.q_len, ranks, r));
    const auto& mine = pos[static_cast<std::size_t>(me)];
    kernels::attention_shape local = p.global;
    local.q_len = local.k_len = p.global.q_len / ranks;
    const auto dev = kernels::make_executor(device_kind::cpu);
    for (const bool keep : {true, false}) {
        SCOPED_TRACE(c.variant + " u=" + std::to_string(c.u) + " kv-heads=" +
                     std::to_string(c.kv_heads) + " causal=" + std::to_string(c.causal) +
                     " docs='" + c.docs + "' keep_forward=" + std::to_string(keep));
        testing_support::counting_communicator counting(*world);
        schemes::cp_config cfg;
        cfg.variant = c.variant;
        cfg.ulysses_degree = c.u;
        cfg.keep_forward = keep;
        auto scheme = schemes::make_cp_attention(cfg, counting, *dev, local, pos);
        scheme->prepare(local, true);
        shard a(*dev, p, mine), b(*dev, other, mine);
        phase_timer timer;
        counting.reset();
        scheme->forward(a.q.data(), a.kv.data(), a.o.data(), keep ? nullptr : a.lse.data(), timer);
        if (!keep) // another layer's forward between this one's forward and backward
            scheme->forward(b.q.data(), b.kv.data(), b.o.data(), b.lse.data(), timer);
        scheme->backward(a.q.data(), a.kv.data(), a.o.data(), a.d_o.data(),
                         keep ? nullptr : a.lse.data(), a.dq.data(), a.dkv.data(), timer);
        EXPECT_DOUBLE_EQ(static_cast<double>(counting.bytes_sent()),
                         scheme->bytes_sent(true) + (keep ? 0.0 : scheme->bytes_sent(false)));
        const std::int64_t bh = p.global.batch * p.global.heads, n = p.global.q_len;
        const std::int64_t d = p.global.head_dim, bhkv = p.global.batch * p.global.kv_heads;
        EXPECT_LT(max_err(a.o.download(), rows_of(p.o, bh, n, d, mine)), 1e-4);
        if (!keep) {
            EXPECT_LT(max_err(a.lse.download(), rows_of(p.lse, bh, n, 1, mine)), 1e-4);
        }
        EXPECT_LT(max_err(a.dq.download(), rows_of(p.dq, bh, n, d, mine)), 1e-4);
        const std::size_t kve = p.dkv.size() / 2;
        const std::vector<float> dk(p.dkv.begin(),
                                    p.dkv.begin() + static_cast<std::ptrdiff_t>(kve));
        const std::vector<float> dv(p.dkv.begin() + static_cast<std::ptrdiff_t>(kve), p.dkv.end());
        auto want = rows_of(dk, bhkv, n, d, mine);
        const auto want_v = rows_of(dv, bhkv, n, d, mine);
        want.insert(want.end(), want_v.begin(), want_v.end());
        EXPECT_LT(max_err(a.dkv.download(), want), 1e-4);
    }
}

std::vector<scheme_case> cases(int ranks) {
    std::vector<scheme_case> out;
    const std::string docs = "fixed:" + std::to_string(24 * ranks / 2 + 3); // cross the shards
    for (const std::string v : {"ring", "allgather", "ulysses"}) {
        const int u = v == "ulysses" ? ranks : 1; // Ulysses: one group of every rank
        out.push_back({v, u, 4, true, ""});
        out.push_back({v, u, 4, true, docs});
        out.push_back({v, u, 4, false, ""});
    }
    for (int u = 1; u <= ranks; ++u)
        if (ranks % u == 0) {
            out.push_back({"hybrid", u, 4, true, ""});
            out.push_back({"hybrid", u, 4, true, docs});
            if (u <= 2) // grouped-query heads: 2 K/V heads for 4 query heads
                out.push_back({"hybrid", u, 2, true, ""});
        }
    out.push_back({"ring", 1, 2, true, ""});
    out.push_back({"allgather", 1, 2, false, docs});
    return out;
}

} // namespace

TEST(cp_attention_mpi, every_scheme_matches_the_reference_for_both_callers) {
    const int ranks = comm::make_world(comm_kind::mpi, comm::memory_space::host)->size();
    for (const scheme_case& c : cases(ranks))
        expect_matches(c);
}

TEST(cp_attention_mpi, an_unknown_scheme_is_refused) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const auto dev = kernels::make_executor(device_kind::cpu);
    schemes::cp_config cfg;
    cfg.variant = "tree";
    kernels::attention_shape local;
    EXPECT_THROW(schemes::make_cp_attention(cfg, *world, *dev, local, {}), config_error);
}
