// RMSNorm over the last dimension in fp32: y = x / rms(x) · γ with rms(x) = sqrt(mean(x²) + eps).
// The forward saves 1/rms per row for the backward. Buffers are row-major and caller-owned.
#pragma once

#include <cstddef>

namespace ringscale::kernels::cpu {

/// y[rows, dim] = x[rows, dim] · inv_rms[row] · gamma[dim] with
/// inv_rms[row] = 1 / sqrt(mean_j x[row, j]² + eps) (sum of squares in double).
/// Overwrites y and inv_rms[rows]; y may alias x (in place).
void rmsnorm_fwd(std::size_t rows, std::size_t dim, float eps, const float* x, const float* gamma,
                 float* y, float* inv_rms);

/// Backward of rmsnorm_fwd given dy[rows, dim] and the saved inv_rms[rows]:
/// dx[rows, dim] is OVERWRITTEN (dx may alias dy); dgamma[dim] += Σ_rows dy · x · inv_rms is
/// ACCUMULATED. eps is not needed: it enters only through inv_rms.
void rmsnorm_bwd(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                 const float* inv_rms, const float* dy, float* dx, float* dgamma);

} // namespace ringscale::kernels::cpu
