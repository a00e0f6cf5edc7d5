// The fp64 reference on sampled rows (kernels/reference/attention_sampled.hpp) against exact
// values, against an independent computation in long double (plain loops, two passes, no
// BLAS) to fp64 precision, and, rounded to fp32, bit for bit against the existing oracle
// (attention_fwd_ref, attention_bwd_ref: double accumulation, fp32 outputs).
#include "kernels/reference/attention_sampled.hpp"

#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::reference;
using pos_t = std::vector<std::int64_t>;
using ld = long double;

namespace {

std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale) {
    std::vector<float> x(n);
    fill_uniform(x.data(), n, seed, 0, scale);
    return x;
}

pos_t iota_pos(std::int64_t n, std::int64_t first = 0) {
    pos_t p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), first);
    return p;
}

/// The independent computation of one query row: scores, max, sum, O, LSE, delta and dQ in
/// long double, straight from the definitions.
struct ld_row {
    std::vector<ld> o, dq;
    ld lse = 0, delta = 0;
};

ld dot(const float* a, const float* b, std::int64_t d) {
    ld s = 0;
    for (std::int64_t x = 0; x < d; ++x)
        s += static_cast<ld>(a[x]) * b[x];
    return s;
}

ld_row independent_row(const attention_shape& s, const float* q, const float* k, const float* v,
                       const float* d_o, std::int64_t qp, const pos_t& kp) {
    const std::int64_t d = s.head_dim;
    const ld scale = attention_scale(s);
    ld_row r;
    r.o.assign(static_cast<std::size_t>(d), 0);
    r.dq.assign(static_cast<std::size_t>(d), 0);
    std::vector<ld> sc(kp.size(), -INFINITY);
    ld m = -INFINITY;
    for (std::size_t j = 0; j < kp.size(); ++j)
        if (mask_visible(s.mask, s.causal, qp, kp[j]))
            m = std::max(m, sc[j] = scale * dot(q, k + j * d, d));
    if (m == -INFINITY) {
        r.lse = -INFINITY;
        return r;
    }
    ld l = 0;
    for (ld x : sc)
        l += std::exp(x - m);
    r.lse = m + std::log(l);
    for (std::size_t j = 0; j < kp.size(); ++j)
        for (std::int64_t x = 0; x < d; ++x)
            r.o[x] += std::exp(sc[j] - m) / l * v[j * d + x];
    for (std::int64_t x = 0; x < d; ++x)
        r.delta += r.o[x] * d_o[x];
    for (std::size_t j = 0; j < kp.size(); ++j) {
        const ld p = std::exp(sc[j] - r.lse);
        const ld ds = p * (dot(d_o, v + j * d, d) - r.delta) * scale;
        for (std::int64_t x = 0; x < d; ++x)
            r.dq[x] += ds * k[j * d + x];
    }
    return r;
}

void expect_close(double got, ld want, ld scale_of, const char* what) {
    EXPECT_LE(std::fabs(static_cast<ld>(got) - want), 1e-13L * std::max<ld>(scale_of, 1e-300L))
        << what << " got " << got << " want " << static_cast<double>(want);
}

} // namespace

TEST(attention_sampled, exact_values_uniform_attention_and_an_empty_row) {
    // q = 0: every visible key scores 0, so P is uniform. Causal row 3 sees keys 0..3: O is the
    // mean of four dyadic V rows exactly and LSE = log 4. Query position -1 sees no key.
    attention_shape s;
    s.q_len = 2;
    s.k_len = 6;
    s.causal = true;
    const std::int64_t d = s.head_dim = 64;
    std::vector<float> q(2 * 64, 0.0f), k = seeded(6 * 64, 3, 2.0f), v(6 * 64), d_o(2 * 64, 0.5f);
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
    const pos_t qp{3, -1}, kp = iota_pos(6);
    const fp64_query_rows r =
        attention_rows_fp64(s, q.data(), k.data(), v.data(), d_o.data(), qp.data(), kp.data());
    for (std::int64_t x = 0; x < d; ++x) {
        double mean = 0;
        for (int j = 0; j < 4; ++j)
            mean += v[static_cast<std::size_t>(j * d + x)];
        EXPECT_EQ(r.o[static_cast<std::size_t>(x)], mean / 4);
        EXPECT_EQ(r.o[static_cast<std::size_t>(d + x)], 0.0);
        EXPECT_EQ(r.dq[static_cast<std::size_t>(d + x)], 0.0);
    }
    EXPECT_EQ(r.lse[0], std::log(4.0));
    EXPECT_EQ(r.lse[1], -std::numeric_limits<double>::infinity());
    // A row without statistics (LSE -inf) gives no key gradient.
    std::vector<double> dk(6 * 64, 0.0), dv(6 * 64, 0.0);
    const double lse[2] = {-INFINITY, -INFINITY}, delta[2] = {0, 0};
    attention_shape ks = s;
    ks.q_len = 2;
    key_grads_fp64(ks, q.data(), d_o.data(), {lse, delta}, k.data(), v.data(), qp.data(), kp.data(),
                   dk.data(), dv.data());
    for (std::size_t i = 0; i < dk.size(); ++i)
        ASSERT_TRUE(dk[i] == 0.0 && dv[i] == 0.0);
    ks.heads = 2;
    EXPECT_THROW(key_grads_fp64(ks, q.data(), d_o.data(), {lse, delta}, k.data(), v.data(),
                                qp.data(), kp.data(), dk.data(), dv.data()),
                 config_error);
}

TEST(attention_sampled, every_row_of_a_small_case_equals_the_oracle_rounded_to_fp32) {
    for (const bool window : {false, true}) {
        SCOPED_TRACE(window ? "causal, window 37" : "causal");
        attention_shape s;
        s.q_len = s.k_len = 150;
        s.head_dim = 64;
        s.causal = true;
        s.mask.window = window ? 37 : 0;
        const std::size_t n = 150 * 64;
        const auto q = seeded(n, 11, 2.0f), k = seeded(n, 12, 2.0f), v = seeded(n, 13, 1.0f),
                   d_o = seeded(n, 14, 1.0f);
        const pos_t pos = iota_pos(150);
        std::vector<float> o(n), lse(150), dq(n), dk(n), dv(n);
        attention_fwd_ref(s, q.data(), k.data(), v.data(), pos.data(), pos.data(), o.data(),
                          lse.data());
        attention_bwd_ref(s, q.data(), k.data(), v.data(), d_o.data(), pos.data(), pos.data(),
                          dq.data(), dk.data(), dv.data());
        const fp64_query_rows r = attention_rows_fp64(s, q.data(), k.data(), v.data(), d_o.data(),
                                                      pos.data(), pos.data());
        std::vector<double> gk(n, 0.0), gv(n, 0.0);
        key_grads_fp64(s, q.data(), d_o.data(), {r.lse.data(), r.delta.data()}, k.data(), v.data(),
                       pos.data(), pos.data(), gk.data(), gv.data());
        for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(static_cast<float>(r.o[i]), o[i]) << i;
            ASSERT_EQ(static_cast<float>(r.dq[i]), dq[i]) << i;
            ASSERT_EQ(static_cast<float>(gk[i]), dk[i]) << i;
            ASSERT_EQ(static_cast<float>(gv[i]), dv[i]) << i;
        }
        for (std::size_t i = 0; i < 150; ++i)
            ASSERT_EQ(static_cast<float>(r.lse[i]), lse[i]) << i;
    }
}

TEST(attention_sampled, sampled_rows_of_a_long_sequence_match_long_double) {
    // 5000 keys: several chunks on each side. Query rows and key rows sampled across it.
    attention_shape s;
    s.k_len = 5000;
    const std::int64_t d = s.head_dim = 128;
    s.causal = true;
    const std::size_t n = 5000 * 128;
    const auto q = seeded(n, 21, 2.0f), k = seeded(n, 22, 2.0f), v = seeded(n, 23, 1.0f),
               d_o = seeded(n, 24, 1.0f);
    const pos_t all = iota_pos(5000), rows{0, 17, 640, 2047, 4096, 4999};
    s.q_len = static_cast<std::int64_t>(rows.size());
    std::vector<float> qs, ds;
    for (std::int64_t r : rows) {
        qs.insert(qs.end(), q.begin() + r * d, q.begin() + (r + 1) * d);
        ds.insert(ds.end(), d_o.begin() + r * d, d_o.begin() + (r + 1) * d);
    }
    const fp64_query_rows got =
        attention_rows_fp64(s, qs.data(), k.data(), v.data(), ds.data(), rows.data(), all.data());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ld_row want = independent_row(s, qs.data() + i * d, k.data(), v.data(),
                                            ds.data() + i * d, rows[i], all);
        expect_close(got.lse[i], want.lse, std::fabs(want.lse), "lse");
        expect_close(got.delta[i], want.delta, 1, "delta");
        for (std::int64_t x = 0; x < d; ++x) {
            expect_close(got.o[i * d + x], want.o[x], 1, "o");
            expect_close(got.dq[i * d + x], want.dq[x], 1, "dq");
        }
    }
    // Key rows from every query row, given statistics (any values: the contract is the formula).
    std::vector<double> lse(5000), delta(5000);
    for (std::size_t i = 0; i < 5000; ++i) {
        lse[i] = 3.0 + std::log(1.0 + static_cast<double>(i));
        delta[i] = 0.1 * std::sin(static_cast<double>(i));
    }
    std::vector<float> ks, vs;
    for (std::int64_t r : rows) {
        ks.insert(ks.end(), k.begin() + r * d, k.begin() + (r + 1) * d);
        vs.insert(vs.end(), v.begin() + r * d, v.begin() + (r + 1) * d);
    }
    attention_shape kshape = s;
    kshape.q_len = 5000;
    kshape.k_len = static_cast<std::int64_t>(rows.size());
    std::vector<double> dk(rows.size() * d, 0.0), dv(rows.size() * d, 0.0);
    key_grads_fp64(kshape, q.data(), d_o.data(), {lse.data(), delta.data()}, ks.data(), vs.data(),
                   all.data(), rows.data(), dk.data(), dv.data());
    const ld scale = attention_scale(s);
    for (std::size_t j = 0; j < rows.size(); ++j) {
        std::vector<ld> wk(static_cast<std::size_t>(d), 0), wv(static_cast<std::size_t>(d), 0);
        for (std::int64_t i = rows[j]; i < 5000; ++i) { // causal: queries at or after the key
            const ld p = std::exp(scale * dot(q.data() + i * d, ks.data() + j * d, d) - lse[i]);
            const ld dsv = p * (dot(d_o.data() + i * d, vs.data() + j * d, d) - delta[i]) * scale;
            for (std::int64_t x = 0; x < d; ++x) {
                wv[x] += p * d_o[i * d + x];
                wk[x] += dsv * q[i * d + x];
            }
        }
        for (std::int64_t x = 0; x < d; ++x) {
            expect_close(dv[j * d + x], wv[x], 1, "dv");
            expect_close(dk[j * d + x], wk[x], 1, "dk");
        }
    }
}
