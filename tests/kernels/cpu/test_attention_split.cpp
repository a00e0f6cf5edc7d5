// The CPU backend's two ways of running an attention call (kernels/kernels.hpp): `per_group`
// (pieces of kv-head groups with the caller's progress between them, as ring and all-gather
// call it) gives the `whole` call's result to the bit, and a piece spans as many groups as the
// rank has threads, so the backward, whose items are the groups, keeps every thread busy.
#include "kernels/kernels.hpp"
#include "kernels/random.hpp"
#include "kernels/threads.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;

namespace {

struct outputs {
    std::vector<float> o, lse, dq, dk, dv;
    int pieces = 0; ///< progress calls of the forward
};

outputs run(const attention_shape& s, attention_split split) {
    const auto dev = make_executor(device_kind::cpu);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto ke = static_cast<std::size_t>(attention_kv_elems(s));
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    std::vector<float> q(qe), k(ke), v(ke), d_o(qe), delta(rows);
    fill_uniform(q.data(), qe, 71, 0, 2.0f);
    fill_uniform(k.data(), ke, 72, 0, 2.0f);
    fill_uniform(v.data(), ke, 73, 0);
    fill_uniform(d_o.data(), qe, 74, 0);
    std::vector<std::int64_t> pos(static_cast<std::size_t>(s.q_len));
    for (std::size_t i = 0; i < pos.size(); ++i)
        pos[i] = static_cast<std::int64_t>(i);
    const dev_positions p(*dev, pos);
    outputs out{std::vector<float>(qe), std::vector<float>(rows), std::vector<float>(qe, 0.0f),
                std::vector<float>(ke, 0.0f), std::vector<float>(ke, 0.0f)};
    attention_fwd_init(*dev, s, out.o.data(), out.lse.data());
    attention_fwd(*dev, s, elem::f32, q.data(), k.data(), v.data(), p.view(), p.view(),
                  out.o.data(), out.lse.data(), split, [&] { ++out.pieces; });
    attention_bwd_delta(*dev, s, elem::f32, out.o.data(), d_o.data(), delta.data());
    attention_bwd(*dev, s, elem::f32, q.data(), k.data(), v.data(), d_o.data(), out.lse.data(),
                  delta.data(), p.view(), p.view(), out.dq.data(), out.dk.data(), out.dv.data(),
                  split, {});
    return out;
}

attention_shape shape(std::int64_t heads, std::int64_t kv_heads) {
    attention_shape s;
    s.batch = 2;
    s.heads = heads;
    s.kv_heads = kv_heads;
    s.q_len = s.k_len = 160;
    s.head_dim = 64;
    s.causal = true;
    return s;
}

} // namespace

TEST(attention_split, per_group_pieces_span_the_threads_and_equal_the_whole_call) {
    const attention_shape s = shape(8, 4);
    const int saved = blas_threads();
    // batch entries x ceil(groups / threads): 2 x 3, 2 x 2, 2 x 1.
    for (const auto& [threads, expected] : {std::pair{1, 8}, {2, 4}, {4, 2}}) {
        SCOPED_TRACE(threads);
        set_blas_threads(threads);
        const outputs whole = run(s, attention_split::whole);
        const outputs pieces = run(s, attention_split::per_group);
        EXPECT_EQ(whole.pieces, 0);
        EXPECT_EQ(pieces.pieces, expected);
        EXPECT_EQ(pieces.o, whole.o);
        EXPECT_EQ(pieces.lse, whole.lse);
        EXPECT_EQ(pieces.dq, whole.dq);
        EXPECT_EQ(pieces.dk, whole.dk);
        EXPECT_EQ(pieces.dv, whole.dv);
    }
    set_blas_threads(saved);
}

// Groups that the threads do not divide leave a last piece of fewer groups (3 groups on two
// threads: pieces of 2 and 1). A one-group piece runs on one worker with OpenBLAS's own
// threads, so it agrees to rounding, not to the bit.
TEST(attention_split, a_last_piece_of_fewer_groups_covers_the_rest) {
    const int saved = blas_threads();
    set_blas_threads(2);
    const outputs whole = run(shape(6, 3), attention_split::whole);
    const outputs pieces = run(shape(6, 3), attention_split::per_group);
    set_blas_threads(saved);
    EXPECT_EQ(pieces.pieces, 4);
    EXPECT_EQ(pieces.o, whole.o);
    for (const auto& [got, want] :
         {std::pair{&pieces.dq, &whole.dq}, {&pieces.dk, &whole.dk}, {&pieces.dv, &whole.dv}})
        for (std::size_t i = 0; i < got->size(); ++i)
            ASSERT_NEAR((*got)[i], (*want)[i], 1e-5 * (1 + std::fabs((*want)[i]))) << i;
}
