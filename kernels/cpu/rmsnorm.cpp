#include "kernels/cpu/rmsnorm.hpp"

#include "kernels/cpu/vec_math.hpp"
#include "kernels/parallel.hpp"
#include "src/base/error.hpp"

#include <algorithm>

#include <cmath>
#include <string>
#include <vector>

namespace ringscale::kernels::cpu {

namespace {

// Rows per thread at least: ~64K elements, below which a split costs more than it saves.
std::size_t row_grain(std::size_t dim) {
    return std::max<std::size_t>(1, (std::size_t{1} << 16) / dim);
}

// Sums over a row in double, 8 lanes (j mod 8) added pairwise at the end: a fixed order, so
// the same on every thread count, and 8 chains a vector wide where one chain of dependent adds
// ran at a latency per element.
constexpr std::size_t k_lanes = 8;

inline double lane_total(const double (&lane)[k_lanes]) {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
           ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// Σ_j term(j) over j < dim in double, by the lanes above. Inlined into its callers, each
// compiled per ISA, so that the loop vectorises there.
template <class Term>
inline __attribute__((always_inline)) double lane_sum(std::size_t dim, Term term) {
    double lane[k_lanes] = {};
    std::size_t j = 0;
    for (; j + k_lanes <= dim; j += k_lanes)
        for (std::size_t l = 0; l < k_lanes; ++l)
            lane[l] += term(j + l);
    for (std::size_t l = 0; j < dim; ++j, ++l)
        lane[l] += term(j);
    return lane_total(lane);
}

RINGSCALE_VEC_CLONES void rmsnorm_fwd_rows(std::size_t begin, std::size_t end, std::size_t dim,
                                           float eps, const float* x, const float* gamma, float* y,
                                           float* inv_rms) {
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = x + r * dim;
        const double squares =
            lane_sum(dim, [&](std::size_t j) { return static_cast<double>(xr[j]) * xr[j]; });
        const float inv = static_cast<float>(1.0 / std::sqrt(squares / dim + eps));
        inv_rms[r] = inv;
        float* yr = y + r * dim;
        for (std::size_t j = 0; j < dim; ++j)
            yr[j] = xr[j] * inv * gamma[j];
    }
}

// The serial backward of rows [begin, end); dγ accumulated into dgamma_sum[dim].
RINGSCALE_VEC_CLONES void rmsnorm_bwd_rows(std::size_t begin, std::size_t end, std::size_t dim,
                                           const float* x, const float* gamma, const float* inv_rms,
                                           const float* dy, float* dx, double* dgamma_sum) {
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = x + r * dim;
        const float* dyr = dy + r * dim;
        const double inv = inv_rms[r];
        // With g = γ·dy: dx = inv·g − x · inv³ · (g·x) / dim.
        const double dot = lane_sum(
            dim, [&](std::size_t j) { return static_cast<double>(gamma[j]) * dyr[j] * xr[j]; });
        for (std::size_t i = 0; i < dim; ++i)
            dgamma_sum[i] += static_cast<double>(dyr[i]) * xr[i] * inv;
        const float scale = static_cast<float>(inv);
        const float coeff = static_cast<float>(inv * inv * inv * dot / dim);
        float* dxr = dx + r * dim;
        for (std::size_t j = 0; j < dim; ++j)
            dxr[j] = scale * gamma[j] * dyr[j] - coeff * xr[j];
    }
}

/// Throws config_error unless rows > 0, dim > 0 and eps >= 0 (and finite).
void rmsnorm_check(std::size_t rows, std::size_t dim, float eps) {
    RINGSCALE_REQUIRE(rows > 0 && dim > 0,
                      "rmsnorm: rows and dim must be > 0 (got rows=" + std::to_string(rows) +
                          ", dim=" + std::to_string(dim) + ")");
    RINGSCALE_REQUIRE(std::isfinite(eps) && eps >= 0.0f,
                      "rmsnorm: eps must be finite and >= 0 (got " + std::to_string(eps) + ")");
}

} // namespace

void rmsnorm_fwd(std::size_t rows, std::size_t dim, float eps, const float* x, const float* gamma,
                 float* y, float* inv_rms) {
    rmsnorm_check(rows, dim, eps);
    // Rows are independent: split over the rank's threads.
    parallel_for(rows, row_grain(dim), [&](std::size_t begin, std::size_t end) {
        rmsnorm_fwd_rows(begin, end, dim, eps, x, gamma, y, inv_rms);
    });
}

void rmsnorm_bwd(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                 const float* inv_rms, const float* dy, float* dx, float* dgamma) {
    rmsnorm_check(rows, dim, 0.0f);
    // dγ sums over every row: each chunk of rows accumulates its own double partial sums
    // (scratch kept between calls), added in chunk order to the caller's gradient once, so
    // the result does not depend on the thread count.
    const std::size_t grain = row_grain(dim);
    const std::size_t chunks = chunk_count(rows, grain);
    static thread_local std::vector<double> partial;
    if (partial.size() < chunks * dim)
        partial.resize(chunks * dim);
    std::fill(partial.begin(), partial.begin() + static_cast<std::ptrdiff_t>(chunks * dim), 0.0);
    double* sums = partial.data();
    parallel_for_chunks(rows, grain, [&](std::size_t c, std::size_t begin, std::size_t end) {
        rmsnorm_bwd_rows(begin, end, dim, x, gamma, inv_rms, dy, dx, sums + c * dim);
    });
    for (std::size_t k = 1; k < chunks; ++k)
        for (std::size_t j = 0; j < dim; ++j)
            sums[j] += sums[k * dim + j];
    for (std::size_t j = 0; j < dim; ++j)
        dgamma[j] += static_cast<float>(sums[j]);
}

} // namespace ringscale::kernels::cpu
