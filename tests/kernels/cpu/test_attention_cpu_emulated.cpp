// Emulated bf16/fp16 on the CPU (kernels/cpu/attention_cpu.hpp): the rounding helpers against
// their definitions, the 2-byte storage round trip, and the attention kernels rounding where
// the CUDA kernels round (attention_fwd.cu: P before P·V, the row sum unrounded;
// attention_bwd.cu: P before dV, dS from the unrounded P and rounded before dQ and dK) on a
// hand-computed example, then on seeded problems within the CUDA kernels' documented bounds.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/kernels.hpp"

#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using pos_t = std::vector<std::int64_t>;

namespace {

std::uint32_t bits(float x) {
    std::uint32_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

/// The neighbours of x with `keep` significant bits (normal range): lower and upper.
std::pair<double, double> grid_of(double x, int keep) {
    const double ulp = std::ldexp(1.0, std::ilogb(x) - keep + 1);
    const double lo = std::floor(x / ulp) * ulp;
    return {lo, lo + ulp};
}

} // namespace

TEST(emulated_rounding, nearest_with_ties_to_even_on_random_values) {
    for (std::uint64_t i = 0; i < 200000; ++i) {
        const float x = std::ldexp(uniform_at(7, i), static_cast<int>(i % 24) - 12);
        if (x == 0.0f)
            continue;
        for (const auto& [keep, r] : {std::pair<int, float>{8, round_to_bf16(x)},
                                      std::pair<int, float>{11, round_to_f16(x)}}) {
            if (keep == 11 && std::fabs(x) < 0x1p-14f)
                continue; // fp16 subnormals: below
            const auto [lo, hi] = grid_of(std::fabs(static_cast<double>(x)), keep);
            const double a = std::fabs(static_cast<double>(r));
            ASSERT_TRUE(a == lo || a == hi) << x << " -> " << r;
            const double d_lo = std::fabs(x) - lo, d_hi = hi - std::fabs(x);
            if (d_lo != d_hi)
                ASSERT_EQ(a, d_lo < d_hi ? lo : hi) << x;
            else // a tie: the even neighbour (its last kept bit 0)
                ASSERT_EQ(std::fmod(a / (hi - lo), 2.0), 0.0) << x;
            ASSERT_EQ(std::signbit(r), std::signbit(x));
        }
    }
    EXPECT_EQ(round_to_f16(3 * 0x1p-25f), 0x1p-23f);    // subnormal: 1.5 ulp -> 2 ulp
    EXPECT_EQ(round_to_f16(0x1p-25f), 0.0f);            // tie -> even (0)
    EXPECT_TRUE(std::signbit(round_to_f16(-0x1p-26f))); // a negative rounds to -0
    EXPECT_EQ(round_to_f16(-5 * 0x1p-25f), -0x1p-23f);
    EXPECT_TRUE(std::isinf(round_to_f16(65520.0f)));
    EXPECT_EQ(round_to_f16(65519.0f), 65504.0f);
    EXPECT_TRUE(std::isinf(round_to_bf16(INFINITY)));
    EXPECT_TRUE(std::isnan(round_to_bf16(NAN)));
    EXPECT_TRUE(std::isnan(round_to_f16(NAN)));
}

TEST(emulated_rounding, two_byte_storage_round_trips_every_pattern) {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const auto pattern = static_cast<std::uint16_t>(h);
        for (elem e : {elem::bf16, elem::f16}) {
            float x = 0;
            elem_decode(e, &pattern, &x, 1);
            if (std::isnan(x))
                continue;
            std::uint16_t back = 0;
            elem_encode(e, &x, &back, 1);
            ASSERT_EQ(back, pattern) << elem_short_name(e) << " " << h;
            ASSERT_EQ(round_to(e, x), x); // a stored value is its own rounding
        }
    }
    // bf16 is the top half of the fp32 pattern; fp16 1.0 is 0x3c00, -2.5 is 0xc100.
    const float in[3] = {1.0f, 1.0f + 0x1p-8f, -2.5f};
    std::uint16_t out[3];
    elem_encode(elem::bf16, in, out, 3);
    EXPECT_EQ(out[0], bits(1.0f) >> 16);
    EXPECT_EQ(out[1], bits(1.0f) >> 16); // a tie, to even
    EXPECT_EQ(out[2], 0xc020u);
    elem_encode(elem::f16, in, out, 3);
    EXPECT_EQ(out[0], 0x3c00u);
    EXPECT_EQ(out[2], 0xc100u);
}

namespace {

// The hand-computed example: one query, two keys, D = 64 (scale 1/8), not causal.
// q = e0; k1 = 0, k2 = -2.875 e0, so the scores are 0 and -0.359375; v1 = e0, v2 = e1;
// dO = e1. Unnormalised P: 1 and p2 = exp(-0.359375) = 0.698112510068126 (row max 0).
//   bf16: p2 -> 0.69921875 (178.72 units of 2^-8), fp16: -> 0.6982421875 (1429.73 of 2^-11).
//   O = (v1 + round(p2) v2) / (1 + p2): the sum is of the UNROUNDED P, as on CUDA.
//   LSE = log(1 + p2) = 0.5295173460404.
// Backward, with P normalised by the LSE: P1 = 0.588889130767832, P2 = 0.411110869232168;
// delta = O . dO = O[1]; dP = (0, 1); dS_j = P_j (dP_j - delta) / 8 from the UNROUNDED P.
//   dV_j = round(P_j) dO; dK_j = round(dS_j) q; dQ = round(dS_2) k2 (k1 = 0).
struct hand_case {
    elem e;
    double o1;       // O[1] = round(p2) / (1 + p2)
    double dv1, dv2; // round(P1), round(P2)
    double dk1, dk2; // round(dS_1), round(dS_2)
};

// Values worked out from the formulas above (the fractions of a unit show no tie is near):
//   bf16: round(P1) = 0.58984375 (.756), round(P2) = 0.41015625 (.489),
//         dS = (-0.0303102945, 0.0302288629) -> (-0.0302734375, 0.0302734375) (.698, .635)
//   fp16: round(P1) = 0.5888671875 (.045), round(P2) = 0.4111328125 (.910),
//         dS = (-0.0302679617, 0.0302584160) -> (-0.0302734375, 0.0302581787109375)
const hand_case hand_cases[] = {
    {elem::bf16, 0.41176232190407003, 0.58984375, 0.41015625, -0.0302734375, 0.0302734375},
    {elem::f16, 0.4111872348623046, 0.5888671875, 0.4111328125, -0.0302734375, 0.0302581787109375},
};

} // namespace

TEST(emulated_attention, rounds_where_the_cuda_kernels_round_on_a_hand_computed_example) {
    const auto dev = make_executor(device_kind::cpu);
    attention_shape s;
    s.q_len = 1;
    s.k_len = 2;
    s.head_dim = 64;
    std::vector<float> q(64, 0.0f), kv(4 * 64, 0.0f), d_o(64, 0.0f);
    q[0] = 1.0f;
    kv[64] = -2.875f;   // k2[0]; k1 = 0
    kv[128] = 1.0f;     // v1 = e0
    kv[192 + 1] = 1.0f; // v2 = e1
    d_o[1] = 1.0f;      // dO = e1
    const pos_t pos{0, 1};
    const dev_positions qp(*dev, {0}), kp(*dev, pos);
    for (const hand_case& c : hand_cases) {
        SCOPED_TRACE(elem_short_name(c.e));
        std::vector<std::uint16_t> q2(64), kv2(4 * 64), do2(64);
        convert(*dev, c.e, q.size(), q.data(), q2.data());
        convert(*dev, c.e, kv.size(), kv.data(), kv2.data());
        convert(*dev, c.e, d_o.size(), d_o.data(), do2.data());
        std::vector<float> o(64), lse(1), delta(1), dq(64, 0.0f), dk(128, 0.0f), dv(128, 0.0f);
        attention_fwd_init(*dev, s, o.data(), lse.data());
        attention_fwd(*dev, s, c.e, q2.data(), kv2.data(), kv2.data() + 128, qp.view(), kp.view(),
                      o.data(), lse.data(), attention_split::whole, {});
        const double p2 = std::exp(-0.359375);
        EXPECT_NEAR(o[0], 1.0 / (1.0 + p2), 1e-6);
        EXPECT_NEAR(o[1], c.o1, 1e-6);
        EXPECT_NEAR(lse[0], 0.5295173460403997, 1e-6); // log of the unrounded sum
        attention_bwd_delta(*dev, s, c.e, o.data(), do2.data(), delta.data());
        EXPECT_EQ(delta[0], o[1]);
        attention_bwd(*dev, s, c.e, q2.data(), kv2.data(), kv2.data() + 128, do2.data(), lse.data(),
                      delta.data(), qp.view(), kp.view(), dq.data(), dk.data(), dv.data(),
                      attention_split::whole, {});
        EXPECT_FLOAT_EQ(dv[1], static_cast<float>(c.dv1));
        EXPECT_FLOAT_EQ(dv[64 + 1], static_cast<float>(c.dv2));
        EXPECT_FLOAT_EQ(dk[0], static_cast<float>(c.dk1));
        EXPECT_FLOAT_EQ(dk[64], static_cast<float>(c.dk2));
        EXPECT_FLOAT_EQ(dq[0], static_cast<float>(c.dk2 * -2.875));
        // Nothing else moves: dV only along dO, dK and dQ only along q and k2.
        EXPECT_EQ(dv[0], 0.0f);
        EXPECT_EQ(dk[1], 0.0f);
        EXPECT_EQ(dq[1], 0.0f);
    }
}

TEST(emulated_attention, delta_adds_in_the_cuda_kernels_order) {
    // o . dO with terms 2^24 (d = 0), 1 (d = 1), 1 (d = 2): fp32 lanes then the butterfly
    // give ((2^24 + 1) + 1) = 2^24 (each 1 a tie to even); the fp32 path's double sum 2^24 + 2.
    attention_shape s;
    s.q_len = 1;
    s.k_len = 1;
    s.head_dim = 64;
    std::vector<float> o(64, 0.0f), d_o(64, 0.0f);
    o[0] = 0x1p24f;
    o[1] = o[2] = 1.0f;
    d_o[0] = d_o[1] = d_o[2] = 1.0f;
    float delta = 0;
    cpu::attention_bwd_delta(s, o.data(), d_o.data(), &delta, elem::bf16);
    EXPECT_EQ(delta, 0x1p24f);
    cpu::attention_bwd_delta(s, o.data(), d_o.data(), &delta, elem::f32);
    EXPECT_EQ(delta, 0x1p24f + 2.0f);
}

TEST(emulated_attention, seeded_problems_stay_within_the_cuda_bounds_and_do_round) {
    // tests/kernels/cuda/test_attention_gpu.cpp's bounds against the double reference on the
    // same rounded inputs: |O - O_ref| <= 2u max|V|, |g - g_ref| <= 4u max|g_ref|; and the
    // rounding is real: the error is well above the fp32 kernels' (~1e-6).
    const auto dev = make_executor(device_kind::cpu);
    attention_shape s;
    s.heads = 2;
    s.q_len = s.k_len = 300;
    s.head_dim = 64;
    s.causal = true;
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto ke = static_cast<std::size_t>(attention_kv_elems(s));
    pos_t pos(300);
    for (std::int64_t i = 0; i < 300; ++i)
        pos[static_cast<std::size_t>(i)] = i;
    const dev_positions p(*dev, pos);
    for (elem e : {elem::bf16, elem::f16}) {
        SCOPED_TRACE(elem_short_name(e));
        std::vector<float> q(qe), k(ke), v(ke), d_o(qe);
        fill_uniform(q.data(), qe, 41, 0, 2.0f);
        fill_uniform(k.data(), ke, 42, 0, 2.0f);
        fill_uniform(v.data(), ke, 43, 0);
        fill_uniform(d_o.data(), qe, 44, 0);
        for (auto* t : {&q, &k, &v, &d_o})
            for (float& x : *t)
                x = round_to(e, x);
        std::vector<std::uint16_t> q2(qe), k2(ke), v2(ke), do2(qe);
        convert(*dev, e, qe, q.data(), q2.data());
        convert(*dev, e, ke, k.data(), k2.data());
        convert(*dev, e, ke, v.data(), v2.data());
        convert(*dev, e, qe, d_o.data(), do2.data());
        std::vector<float> o(qe), lse(600), delta(600), dq(qe, 0.0f), dk(ke, 0.0f), dv(ke, 0.0f);
        attention_fwd_init(*dev, s, o.data(), lse.data());
        attention_fwd(*dev, s, e, q2.data(), k2.data(), v2.data(), p.view(), p.view(), o.data(),
                      lse.data(), attention_split::whole, {});
        attention_bwd_delta(*dev, s, e, o.data(), do2.data(), delta.data());
        attention_bwd(*dev, s, e, q2.data(), k2.data(), v2.data(), do2.data(), lse.data(),
                      delta.data(), p.view(), p.view(), dq.data(), dk.data(), dv.data(),
                      attention_split::whole, {});
        std::vector<float> ro(qe), rl(600), rdq(qe), rdk(ke), rdv(ke);
        reference::attention_fwd_ref(s, q.data(), k.data(), v.data(), pos.data(), pos.data(),
                                     ro.data(), rl.data());
        reference::attention_bwd_ref(s, q.data(), k.data(), v.data(), d_o.data(), pos.data(),
                                     pos.data(), rdq.data(), rdk.data(), rdv.data());
        const double u = unit_roundoff(e);
        const auto max_diff = [](const std::vector<float>& a, const std::vector<float>& b) {
            double m = 0, r = 0;
            for (std::size_t i = 0; i < a.size(); ++i) {
                m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
                r = std::max(r, std::fabs(static_cast<double>(b[i])));
            }
            return std::pair<double, double>{m, r};
        };
        const auto [eo, vmax] = max_diff(o, ro);
        EXPECT_LE(eo, 2 * u * 1.0);
        EXPECT_GT(eo, 1e-5); // P was rounded
        for (const auto& [got, want] : {std::pair{&dq, &rdq}, {&dk, &rdk}, {&dv, &rdv}}) {
            const auto [eg, gmax] = max_diff(*got, *want);
            EXPECT_LE(eg, 4 * u * gmax);
            EXPECT_GT(eg, 1e-5 * gmax);
        }
        (void)vmax;
    }
}
