#include "kernels/reference/attention_ref.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace ringscale::kernels::reference {

namespace {

/// Scaled scores of query row `qi` against all keys, in double; -inf where masked.
/// Returns the row maximum (-inf when no key is visible).
double scores_row(const attention_shape& s, const float* qi, const float* kh, std::int64_t qp,
                  const std::int64_t* k_pos, double scale, std::vector<double>& out) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < s.k_len; ++j) {
        if (!mask_visible(s.mask, s.causal, qp, k_pos[j])) {
            out[j] = -std::numeric_limits<double>::infinity();
            continue;
        }
        double dot = 0.0;
        for (std::int64_t d = 0; d < s.head_dim; ++d)
            dot += static_cast<double>(qi[d]) * kh[j * s.head_dim + d];
        out[j] = dot * scale;
        m = std::max(m, out[j]);
    }
    return m;
}

} // namespace

void attention_fwd_ref(const attention_shape& s, const float* q, const float* k, const float* v,
                       const std::int64_t* q_pos, const std::int64_t* k_pos, float* o, float* lse) {
    check_attention_shape(s);
    const double scale = attention_scale(s);
    const std::int64_t D = s.head_dim;
    const std::int64_t group = s.heads / s.kv_heads;
    std::vector<double> p(static_cast<std::size_t>(s.k_len));
    std::vector<double> acc(static_cast<std::size_t>(D));
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t h = 0; h < s.heads; ++h) {
            const std::int64_t kv = (b * s.kv_heads + h / group) * s.k_len * D;
            const std::int64_t qh = (b * s.heads + h) * s.q_len;
            for (std::int64_t i = 0; i < s.q_len; ++i) {
                const double m = scores_row(s, q + (qh + i) * D, k + kv, q_pos[i], k_pos, scale, p);
                float* oi = o + (qh + i) * D;
                if (m == -std::numeric_limits<double>::infinity()) {
                    std::fill_n(oi, D, 0.0f);
                    lse[qh + i] = -std::numeric_limits<float>::infinity();
                    continue;
                }
                double l = 0.0;
                std::fill(acc.begin(), acc.end(), 0.0);
                for (std::int64_t j = 0; j < s.k_len; ++j) {
                    const double w = std::exp(p[j] - m); // exp(-inf) = 0 for masked keys
                    l += w;
                    for (std::int64_t d = 0; d < D; ++d)
                        acc[d] += w * v[kv + j * D + d];
                }
                for (std::int64_t d = 0; d < D; ++d)
                    oi[d] = static_cast<float>(acc[d] / l);
                lse[qh + i] = static_cast<float>(m + std::log(l));
            }
        }
}

void attention_bwd_ref(const attention_shape& s, const float* q, const float* k, const float* v,
                       const float* d_o, const std::int64_t* q_pos, const std::int64_t* k_pos,
                       float* dq, float* dk, float* dv) {
    check_attention_shape(s);
    const double scale = attention_scale(s);
    const std::int64_t D = s.head_dim;
    const std::int64_t group = s.heads / s.kv_heads;
    std::vector<double> p(static_cast<std::size_t>(s.k_len));
    std::vector<double> dp(static_cast<std::size_t>(s.k_len));
    std::vector<double> dkv(static_cast<std::size_t>(2 * attention_kv_elems(s)), 0.0);
    double* dk_acc = dkv.data();
    double* dv_acc = dkv.data() + attention_kv_elems(s);
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t h = 0; h < s.heads; ++h) {
            const std::int64_t kv = (b * s.kv_heads + h / group) * s.k_len * D;
            const std::int64_t qh = (b * s.heads + h) * s.q_len;
            for (std::int64_t i = 0; i < s.q_len; ++i) {
                const float* qi = q + (qh + i) * D;
                const float* doi = d_o + (qh + i) * D;
                float* dqi = dq + (qh + i) * D;
                const double m = scores_row(s, qi, k + kv, q_pos[i], k_pos, scale, p);
                std::fill_n(dqi, D, 0.0f);
                if (m == -std::numeric_limits<double>::infinity())
                    continue; // fully masked row: no gradient flows
                double l = 0.0;
                for (std::int64_t j = 0; j < s.k_len; ++j)
                    l += (p[j] = std::exp(p[j] - m));
                double delta = 0.0; // rowsum(P * dP) = rowsum(dO * O)
                for (std::int64_t j = 0; j < s.k_len; ++j) {
                    p[j] /= l;
                    double dot = 0.0;
                    for (std::int64_t d = 0; d < D; ++d)
                        dot += static_cast<double>(doi[d]) * v[kv + j * D + d];
                    dp[j] = dot;
                    delta += p[j] * dot;
                }
                std::vector<double> dq_row(static_cast<std::size_t>(D), 0.0);
                for (std::int64_t j = 0; j < s.k_len; ++j) {
                    if (p[j] == 0.0)
                        continue;
                    const double ds = p[j] * (dp[j] - delta) * scale;
                    for (std::int64_t d = 0; d < D; ++d) {
                        dv_acc[kv + j * D + d] += p[j] * doi[d];
                        dk_acc[kv + j * D + d] += ds * qi[d];
                        dq_row[d] += ds * k[kv + j * D + d];
                    }
                }
                for (std::int64_t d = 0; d < D; ++d)
                    dqi[d] = static_cast<float>(dq_row[d]);
            }
        }
    for (std::int64_t e = 0; e < attention_kv_elems(s); ++e) {
        dk[e] = static_cast<float>(dk_acc[e]);
        dv[e] = static_cast<float>(dv_acc[e]);
    }
}

} // namespace ringscale::kernels::reference
