#include "kernels/reference/attention_sampled.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <limits>

namespace ringscale::kernels::reference {

namespace {

constexpr double k_neg_inf = -std::numeric_limits<double>::infinity();

void check_one_head(const attention_shape& s, const char* who) {
    check_attention_shape(s);
    if (s.batch != 1 || s.heads != 1 || s.kv_heads != 1)
        throw config_error(std::string(who) + ": one head per call (batch = heads = kv_heads = 1)");
}

/// Rows of another call's side per chunk: about 2^20 scores in flight (8 MiB of doubles).
std::int64_t chunk_rows(std::int64_t other_rows) {
    return std::clamp<std::int64_t>((std::int64_t{1} << 20) / std::max<std::int64_t>(other_rows, 1),
                                    64, 4096);
}

/// rows [first, first + n) of a [*, d] float array, widened into `out` [n, d].
void widen(const float* src, std::int64_t first, std::int64_t n, std::int64_t d,
           std::vector<double>& out) {
    out.resize(static_cast<std::size_t>(n * d));
    std::copy(src + first * d, src + (first + n) * d, out.begin());
}

/// c [m, n] = scale * a [m, d] . b [n, d]^T for queries a at a_pos and keys b at b_pos, with
/// -inf where mask_visible says the key is not visible.
void scores(const attention_shape& s, const double* a, std::int64_t m, const double* b,
            std::int64_t n, const std::int64_t* a_pos, const std::int64_t* b_pos, double scale,
            std::vector<double>& c) {
    c.resize(static_cast<std::size_t>(m * n));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(s.head_dim), scale, a, static_cast<int>(s.head_dim), b,
                static_cast<int>(s.head_dim), 0.0, c.data(), static_cast<int>(n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            if (!mask_visible(s.mask, s.causal, a_pos[i], b_pos[j]))
                c[static_cast<std::size_t>(i * n + j)] = k_neg_inf;
}

/// c [m, n] (+)= a [m, k] . b [k, n] (transposes as asked), doubles, row-major.
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
          const double* b, double beta, double* c) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
                static_cast<int>(ta ? m : k), b, static_cast<int>(tb ? k : n), beta, c,
                static_cast<int>(n));
}

/// Online softmax over one key chunk: update each row's max m and sum l, rescale O, turn the
/// scores into exp(s - m) in place (0 where masked).
void online_step(std::vector<double>& sc, std::int64_t rows, std::int64_t cols,
                 std::vector<double>& m, std::vector<double>& l, std::vector<double>& o,
                 std::int64_t d) {
    for (std::int64_t i = 0; i < rows; ++i) {
        double* row = sc.data() + i * cols;
        const double m_new = std::max(m[i], *std::max_element(row, row + cols));
        if (m_new == k_neg_inf) { // nothing visible yet
            std::fill(row, row + cols, 0.0);
            continue;
        }
        const double alpha = std::exp(m[i] - m_new); // 0 when nothing was seen before
        double sum = 0;
        for (std::int64_t j = 0; j < cols; ++j)
            sum += (row[j] = std::exp(row[j] - m_new));
        l[i] = l[i] * alpha + sum;
        m[i] = m_new;
        for (std::int64_t x = 0; x < d; ++x)
            o[static_cast<std::size_t>(i * d + x)] *= alpha;
    }
}

} // namespace

fp64_query_rows attention_rows_fp64(const attention_shape& s, const float* q, const float* k,
                                    const float* v, const float* d_o, const std::int64_t* q_pos,
                                    const std::int64_t* k_pos) {
    check_one_head(s, "attention_rows_fp64");
    const std::int64_t n = s.q_len, d = s.head_dim, chunk = chunk_rows(n);
    const double scale = attention_scale(s); // the fp32 scale every kernel uses, exactly
    fp64_query_rows out;
    out.o.assign(static_cast<std::size_t>(n * d), 0.0);
    std::vector<double> qd, kc, vc, sc, m(static_cast<std::size_t>(n), k_neg_inf),
        l(static_cast<std::size_t>(n), 0.0);
    widen(q, 0, n, d, qd);
    for (std::int64_t j0 = 0; j0 < s.k_len; j0 += chunk) {
        const std::int64_t cols = std::min(chunk, s.k_len - j0);
        widen(k, j0, cols, d, kc);
        widen(v, j0, cols, d, vc);
        scores(s, qd.data(), n, kc.data(), cols, q_pos, k_pos + j0, scale, sc);
        online_step(sc, n, cols, m, l, out.o, d);
        gemm(false, false, n, d, cols, sc.data(), vc.data(), 1.0, out.o.data());
    }
    out.lse.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const auto r = static_cast<std::size_t>(i);
        out.lse[r] = l[r] > 0 ? m[r] + std::log(l[r]) : k_neg_inf;
        for (std::int64_t x = 0; x < d; ++x)
            out.o[r * d + x] = l[r] > 0 ? out.o[r * d + x] / l[r] : 0.0;
    }
    if (d_o == nullptr)
        return out;
    std::vector<double> dod, dp;
    widen(d_o, 0, n, d, dod);
    out.delta.assign(static_cast<std::size_t>(n), 0.0);
    for (std::size_t i = 0; i < out.delta.size(); ++i)
        for (std::int64_t x = 0; x < d; ++x)
            out.delta[i] += out.o[i * d + x] * dod[i * d + x];
    out.dq.assign(static_cast<std::size_t>(n * d), 0.0);
    for (std::int64_t j0 = 0; j0 < s.k_len; j0 += chunk) {
        const std::int64_t cols = std::min(chunk, s.k_len - j0);
        widen(k, j0, cols, d, kc);
        widen(v, j0, cols, d, vc);
        scores(s, qd.data(), n, kc.data(), cols, q_pos, k_pos + j0, scale, sc);
        dp.resize(sc.size());
        gemm(false, true, n, cols, d, dod.data(), vc.data(), 0.0, dp.data());
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < cols; ++j) {
                const auto e = static_cast<std::size_t>(i * cols + j);
                const double lse = out.lse[static_cast<std::size_t>(i)];
                const double p = lse == k_neg_inf ? 0.0 : std::exp(sc[e] - lse);
                sc[e] = p * (dp[e] - out.delta[static_cast<std::size_t>(i)]) * scale; // dS
            }
        gemm(false, false, n, d, cols, sc.data(), kc.data(), 1.0, out.dq.data());
    }
    return out;
}

void key_grads_fp64(const attention_shape& s, const float* q, const float* d_o,
                    const row_stats& stats, const float* k, const float* v,
                    const std::int64_t* q_pos, const std::int64_t* k_pos, double* dk, double* dv) {
    check_one_head(s, "key_grads_fp64");
    const std::int64_t m = s.k_len, d = s.head_dim, chunk = chunk_rows(m);
    const double scale = attention_scale(s);
    if (m == 0)
        return;
    std::vector<double> kd, vd, qc, doc, sc, dp;
    widen(k, 0, m, d, kd);
    widen(v, 0, m, d, vd);
    const std::int64_t first_key = *std::min_element(k_pos, k_pos + m);
    for (std::int64_t i0 = 0; i0 < s.q_len; i0 += chunk) {
        const std::int64_t rows = std::min(chunk, s.q_len - i0);
        if (s.causal && *std::max_element(q_pos + i0, q_pos + i0 + rows) < first_key)
            continue; // no query of the chunk sees a sampled key
        widen(q, i0, rows, d, qc);
        widen(d_o, i0, rows, d, doc);
        scores(s, qc.data(), rows, kd.data(), m, q_pos + i0, k_pos, scale, sc);
        dp.resize(sc.size());
        gemm(false, true, rows, m, d, doc.data(), vd.data(), 0.0, dp.data());
        for (std::int64_t i = 0; i < rows; ++i) {
            const double lse = stats.lse[i0 + i], delta = stats.delta[i0 + i];
            for (std::int64_t j = 0; j < m; ++j) {
                const auto e = static_cast<std::size_t>(i * m + j);
                const double p = lse == k_neg_inf ? 0.0 : std::exp(sc[e] - lse);
                sc[e] = p;
                dp[e] = p * (dp[e] - delta) * scale; // dS
            }
        }
        gemm(true, false, m, d, rows, sc.data(), doc.data(), 1.0, dv); // dV += P^T dO
        gemm(true, false, m, d, rows, dp.data(), qc.data(), 1.0, dk);  // dK += dS^T Q
    }
}

} // namespace ringscale::kernels::reference
