// The training step's transposes around attention on the CPU: token-major [batch, rows, cols]
// activations to BHSD [batch, heads, rows, d] and back, one (sequence, head) pair per item
// over the rank's threads (kernels/parallel).
#pragma once

#include "kernels/kernels.hpp"

#include <cstdint>

namespace ringscale::kernels::cpu {

/// With `to`: token-major [batch, rows, cols] columns [col0, col0 + heads*D) -> BHSD [batch,
/// heads, rows, D]; without: the inverse, BHSD -> those columns of token-major [.., cols].
void copy_bhsd(bool to, const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
               std::int64_t cols, std::int64_t col0, float* dst);

} // namespace ringscale::kernels::cpu
