#include "kernels/cpu/layout_bhsd.hpp"

#include "kernels/parallel.hpp"

#include <algorithm>

namespace ringscale::kernels::cpu {

void copy_bhsd(bool to, const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
               std::int64_t cols, std::int64_t col0, float* dst) {
    // One (sequence, head) pair per item, split over the rank's threads.
    const auto pairs = static_cast<std::size_t>(s.batch * heads);
    parallel_for(pairs, 1, [&](std::size_t begin, std::size_t end) {
        for (auto bh = static_cast<std::int64_t>(begin); bh < static_cast<std::int64_t>(end);
             ++bh) {
            const std::int64_t b = bh / heads, h = bh % heads;
            for (std::int64_t r = 0; r < s.rows; ++r) {
                const std::int64_t token = (b * s.rows + r) * cols + col0 + h * d;
                const std::int64_t row = (bh * s.rows + r) * d;
                if (to)
                    std::copy(src + token, src + token + d, dst + row);
                else
                    std::copy(src + row, src + row + d, dst + token);
            }
        }
    });
}

} // namespace ringscale::kernels::cpu
