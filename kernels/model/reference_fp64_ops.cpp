#include "kernels/model/reference_fp64_ops.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <cblas.h>

namespace ringscale::kernels::model::fp64 {

namespace {

int as_int(std::size_t n) {
    return static_cast<int>(n);
}

} // namespace

void linear_fwd(std::size_t t, std::size_t in, std::size_t out, const double* x, const double* w,
                const double* b, double* y) {
    for (std::size_t r = 0; r < t; ++r)
        for (std::size_t o = 0; o < out; ++o)
            y[r * out + o] = b ? b[o] : 0.0;
    // y += x·Wᵀ
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, as_int(t), as_int(out), as_int(in), 1.0, x,
                as_int(in), w, as_int(in), 1.0, y, as_int(out));
}

void linear_bwd(std::size_t t, std::size_t in, std::size_t out, const double* x, const double* w,
                const double* dy, double* dx, double* dw, double* db) {
    if (dx) // dx = dy·W
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, as_int(t), as_int(in), as_int(out),
                    1.0, dy, as_int(out), w, as_int(in), 0.0, dx, as_int(in));
    // dW += dyᵀ·x
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, as_int(out), as_int(in), as_int(t), 1.0,
                dy, as_int(out), x, as_int(in), 1.0, dw, as_int(in));
    if (db)
        for (std::size_t r = 0; r < t; ++r)
            for (std::size_t o = 0; o < out; ++o)
                db[o] += dy[r * out + o];
}

void rmsnorm_fwd(std::size_t rows, std::size_t dim, double eps, const double* x,
                 const double* gamma, double* y, double* inv) {
    for (std::size_t r = 0; r < rows; ++r) {
        const double* xr = x + r * dim;
        double sum_sq = 0;
        for (std::size_t j = 0; j < dim; ++j)
            sum_sq += xr[j] * xr[j];
        inv[r] = 1.0 / std::sqrt(sum_sq / static_cast<double>(dim) + eps);
        for (std::size_t j = 0; j < dim; ++j)
            y[r * dim + j] = xr[j] * inv[r] * gamma[j];
    }
}

void rmsnorm_bwd(std::size_t rows, std::size_t dim, const double* x, const double* gamma,
                 const double* inv, const double* dy, double* dx, double* dgamma) {
    for (std::size_t r = 0; r < rows; ++r) {
        const double* xr = x + r * dim;
        const double* dyr = dy + r * dim;
        // With g = γ·dy: dx = inv·g − x · inv³ · (g·x) / dim.
        double dot = 0;
        for (std::size_t j = 0; j < dim; ++j) {
            dot += gamma[j] * dyr[j] * xr[j];
            dgamma[j] += dyr[j] * xr[j] * inv[r];
        }
        const double coeff = inv[r] * inv[r] * inv[r] * dot / static_cast<double>(dim);
        for (std::size_t j = 0; j < dim; ++j)
            dx[r * dim + j] = inv[r] * gamma[j] * dyr[j] - coeff * xr[j];
    }
}

namespace {
const double sqrt_2_over_pi = std::sqrt(2.0 / 3.14159265358979323846);
constexpr double cubic = 0.044715;
} // namespace

void gelu_fwd(std::size_t n, const double* x, double* y) {
    for (std::size_t k = 0; k < n; ++k) {
        const double v = x[k];
        y[k] = 0.5 * v * (1.0 + std::tanh(sqrt_2_over_pi * (v + cubic * v * v * v)));
    }
}

void gelu_bwd(std::size_t n, const double* x, const double* dy, double* dx) {
    for (std::size_t k = 0; k < n; ++k) {
        const double v = x[k];
        const double t = std::tanh(sqrt_2_over_pi * (v + cubic * v * v * v));
        const double du = sqrt_2_over_pi * (1.0 + 3.0 * cubic * v * v);
        dx[k] = dy[k] * (0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * du);
    }
}

void swiglu_fwd(std::size_t rows, std::size_t f, const double* h1, double* g) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < f; ++c) {
            const double x = h1[r * 2 * f + c];
            g[r * f + c] = x / (1.0 + std::exp(-x)) * h1[r * 2 * f + f + c];
        }
}

void swiglu_bwd(std::size_t rows, std::size_t f, const double* h1, const double* dg, double* dh1) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < f; ++c) {
            const double x = h1[r * 2 * f + c], up = h1[r * 2 * f + f + c];
            const double s = 1.0 / (1.0 + std::exp(-x)), d = dg[r * f + c];
            dh1[r * 2 * f + c] = d * up * s * (1.0 + x * (1.0 - s));
            dh1[r * 2 * f + f + c] = d * x * s;
        }
}

namespace {

// Column of K/V head (query head h's group) in a K or V block: (h / group)·head_dim.
std::size_t kv_column(const attention_geometry& g, std::size_t h) {
    return h / (g.heads / g.kv_count()) * g.head_dim;
}

// The softmax of query row i of head h over the keys it sees: p[j] for j < rows (0 where
// masked). False when it sees none.
bool softmax_row(const attention_geometry& g, const double* qkv, std::size_t h, std::size_t i,
                 std::vector<double>& p) {
    const std::size_t hd = g.heads * g.head_dim, width = g.width(), d = g.head_dim;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const double* q = qkv + i * width + h * d;
    const std::size_t kc = hd + kv_column(g, h);
    double top = -INFINITY;
    p.assign(g.rows, 0.0);
    std::vector<bool> seen(g.rows, false);
    for (std::size_t j = 0; j < g.rows; ++j) {
        if (!mask_visible(g.mask, true, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)))
            continue;
        const double* k = qkv + j * width + kc;
        double s = 0;
        for (std::size_t c = 0; c < d; ++c)
            s += q[c] * k[c];
        p[j] = s * scale;
        seen[j] = true;
        top = std::max(top, p[j]);
    }
    if (top == -INFINITY)
        return false;
    double sum = 0;
    for (std::size_t j = 0; j < g.rows; ++j) {
        p[j] = seen[j] ? std::exp(p[j] - top) : 0.0;
        sum += p[j];
    }
    for (double& pj : p)
        pj /= sum;
    return true;
}

} // namespace

void attention_fwd(const attention_geometry& g, const double* qkv, double* o) {
    const std::size_t hd = g.heads * g.head_dim, width = g.width(), d = g.head_dim;
    const std::size_t kvd = g.kv_count() * d;
    std::vector<double> p;
    std::fill(o, o + g.rows * hd, 0.0);
    for (std::size_t h = 0; h < g.heads; ++h)
        for (std::size_t i = 0; i < g.rows; ++i) {
            if (!softmax_row(g, qkv, h, i, p))
                continue;
            double* oi = o + i * hd + h * d;
            for (std::size_t j = 0; j < g.rows; ++j) {
                const double* v = qkv + j * width + hd + kvd + kv_column(g, h);
                for (std::size_t c = 0; c < d; ++c)
                    oi[c] += p[j] * v[c];
            }
        }
}

void attention_bwd(const attention_geometry& g, const double* qkv, const double* o,
                   const double* d_o, double* dqkv) {
    const std::size_t hd = g.heads * g.head_dim, width = g.width(), d = g.head_dim;
    const std::size_t kvd = g.kv_count() * d;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<double> p;
    std::fill(dqkv, dqkv + g.rows * width, 0.0);
    for (std::size_t h = 0; h < g.heads; ++h)
        for (std::size_t i = 0; i < g.rows; ++i) {
            if (!softmax_row(g, qkv, h, i, p))
                continue;
            const double* doi = d_o + i * hd + h * d;
            const double* oi = o + i * hd + h * d;
            double delta = 0; // Σ_j p_j dP_j = dO_i · O_i
            for (std::size_t c = 0; c < d; ++c)
                delta += doi[c] * oi[c];
            const double* q = qkv + i * width + h * d;
            double* dq = dqkv + i * width + h * d;
            for (std::size_t j = 0; j < g.rows; ++j) {
                if (p[j] == 0.0)
                    continue;
                const std::size_t kc = hd + kv_column(g, h), vc = kc + kvd;
                const double* k = qkv + j * width + kc;
                const double* v = qkv + j * width + vc;
                double* dk = dqkv + j * width + kc;
                double* dv = dqkv + j * width + vc;
                double dp = 0;
                for (std::size_t c = 0; c < d; ++c)
                    dp += doi[c] * v[c];
                const double ds = p[j] * (dp - delta) * scale;
                for (std::size_t c = 0; c < d; ++c) {
                    dq[c] += ds * k[c];
                    dk[c] += ds * q[c];
                    dv[c] += p[j] * doi[c];
                }
            }
        }
}

double cross_entropy_fwd_bwd(std::size_t t, std::size_t vocab, std::size_t total_tokens,
                             const double* logits, const std::int32_t* targets, double* dlogits) {
    const double norm = static_cast<double>(total_tokens);
    double loss = 0;
    for (std::size_t r = 0; r < t; ++r) {
        const double* z = logits + r * vocab;
        double* dz = dlogits + r * vocab;
        const double top = *std::max_element(z, z + vocab);
        double sum = 0;
        for (std::size_t c = 0; c < vocab; ++c)
            sum += std::exp(z[c] - top);
        const auto target = static_cast<std::size_t>(targets[r]);
        loss += (top + std::log(sum) - z[target]) / norm;
        for (std::size_t c = 0; c < vocab; ++c) // in place: z[c] read before dz[c] is written
            dz[c] = (std::exp(z[c] - top) / sum - (c == target ? 1.0 : 0.0)) / norm;
    }
    return loss;
}

void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, double* param,
                const double* grad, double* m, double* v) {
    adamw_check(hp, step);
    const double b1 = hp.beta1, b2 = hp.beta2, lr = hp.lr, eps = hp.eps;
    const double bc1 = 1.0 - std::pow(b1, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(b2, static_cast<double>(step));
    const double decay = 1.0 - lr * static_cast<double>(hp.weight_decay);
    for (std::size_t k = 0; k < n; ++k) {
        m[k] = b1 * m[k] + (1.0 - b1) * grad[k];
        v[k] = b2 * v[k] + (1.0 - b2) * grad[k] * grad[k];
        param[k] = param[k] * decay - lr * ((m[k] / bc1) / (std::sqrt(v[k] / bc2) + eps));
    }
}

} // namespace ringscale::kernels::model::fp64
