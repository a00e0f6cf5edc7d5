#include "kernels/rmsnorm.hpp"

#include "src/error.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace ringscale::kernels {

void rmsnorm_check(std::size_t rows, std::size_t dim, float eps) {
    RINGSCALE_REQUIRE(rows > 0 && dim > 0,
                      "rmsnorm: rows and dim must be > 0 (got rows=" + std::to_string(rows) +
                          ", dim=" + std::to_string(dim) + ")");
    RINGSCALE_REQUIRE(std::isfinite(eps) && eps >= 0.0f,
                      "rmsnorm: eps must be finite and >= 0 (got " + std::to_string(eps) + ")");
}

void rmsnorm_fwd(std::size_t rows, std::size_t dim, float eps, const float* x, const float* gamma,
                 float* y, float* inv_rms) {
    rmsnorm_check(rows, dim, eps);
    for (std::size_t r = 0; r < rows; ++r) {
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
}

void rmsnorm_bwd(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                 const float* inv_rms, const float* dy, float* dx, float* dgamma) {
    rmsnorm_check(rows, dim, 0.0f);
    // dγ sums over every row: accumulate in double, add to the caller's gradient once.
    std::vector<double> dgamma_sum(dim, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
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
    for (std::size_t j = 0; j < dim; ++j)
        dgamma[j] += static_cast<float>(dgamma_sum[j]);
}

} // namespace ringscale::kernels
