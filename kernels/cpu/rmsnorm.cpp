#include "kernels/cpu/rmsnorm.hpp"

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

// The serial backward of rows [begin, end); dγ accumulated into dgamma_sum[dim].
void rmsnorm_bwd_rows(std::size_t begin, std::size_t end, std::size_t dim, const float* x,
                      const float* gamma, const float* inv_rms, const float* dy, float* dx,
                      double* dgamma_sum) {
    for (std::size_t r = begin; r < end; ++r) {
        const float* xr = x + r * dim;
        const float* dyr = dy + r * dim;
        const double inv = inv_rms[r];
        // With g = γ·dy: dx = inv·g − x · inv³ · (g·x) / dim.
        double dot = 0.0;
        for (std::size_t j = 0; j < dim; ++j) {
            dot += static_cast<double>(gamma[j]) * dyr[j] * xr[j];
            dgamma_sum[j] += static_cast<double>(dyr[j]) * xr[j] * inv;
        }
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
        for (std::size_t r = begin; r < end; ++r) {
            const float* xr = x + r * dim;
            double sum_sq = 0.0;
            for (std::size_t j = 0; j < dim; ++j)
                sum_sq += static_cast<double>(xr[j]) * xr[j];
            const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / dim + eps));
            inv_rms[r] = inv;
            float* yr = y + r * dim;
            for (std::size_t j = 0; j < dim; ++j)
                yr[j] = xr[j] * inv * gamma[j];
        }
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
