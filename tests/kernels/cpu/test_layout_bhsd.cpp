// The CPU transposes around the training step's attention (kernels/cpu/layout_bhsd): token-major
// columns to BHSD and back, exactly, other columns untouched.
#include "kernels/cpu/layout_bhsd.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

using namespace ringscale::kernels;

TEST(layout_bhsd, bhsd_transposes_round_trip) {
    const batch_shape s{2, 5};
    std::vector<float> tok(2 * 5 * 3 * 8), bhsd(2 * 2 * 5 * 4), back(tok.size(), 0.0f);
    std::iota(tok.begin(), tok.end(), 0.0f);
    cpu::copy_bhsd(true, s, 2, 4, tok.data(), 24, 8, bhsd.data());
    // (b=1, head=1, row=2, d=3) comes from token (1*5+2), column 8 + 1*4 + 3.
    EXPECT_EQ(bhsd[((1 * 2 + 1) * 5 + 2) * 4 + 3], tok[(1 * 5 + 2) * 24 + 8 + 4 + 3]);
    cpu::copy_bhsd(false, s, 2, 4, bhsd.data(), 24, 8, back.data());
    for (std::size_t t = 0; t < 10; ++t)
        for (std::size_t c = 0; c < 24; ++c)
            EXPECT_EQ(back[t * 24 + c], (c >= 8 && c < 16) ? tok[t * 24 + c] : 0.0f);
}

// Head sizes of whole vectors (16, 64, 128) take the vector copies where the CPU has AVX-512:
// every element there and back, the columns outside the heads untouched.
TEST(layout_bhsd, whole_vector_heads_round_trip_exactly) {
    for (const std::int64_t d : {16, 64, 128}) {
        SCOPED_TRACE("d = " + std::to_string(d));
        const batch_shape s{3, 7};
        const std::int64_t heads = 2, cols = 5 * d, col0 = d; // columns [d, 3d) of 5d
        std::vector<float> tok(static_cast<std::size_t>(s.tokens() * cols));
        std::iota(tok.begin(), tok.end(), 1.0f);
        std::vector<float> bhsd(static_cast<std::size_t>(s.tokens() * heads * d), -1.0f);
        std::vector<float> back(tok.size(), 0.0f);
        cpu::copy_bhsd(true, s, heads, d, tok.data(), cols, col0, bhsd.data());
        for (std::int64_t b = 0; b < s.batch; ++b)
            for (std::int64_t h = 0; h < heads; ++h)
                for (std::int64_t r = 0; r < s.rows; ++r)
                    for (std::int64_t j = 0; j < d; ++j)
                        ASSERT_EQ(
                            bhsd[static_cast<std::size_t>(((b * heads + h) * s.rows + r) * d + j)],
                            tok[static_cast<std::size_t>((b * s.rows + r) * cols + col0 + h * d +
                                                         j)]);
        cpu::copy_bhsd(false, s, heads, d, bhsd.data(), cols, col0, back.data());
        for (std::int64_t t = 0; t < s.tokens(); ++t)
            for (std::int64_t c = 0; c < cols; ++c) {
                const auto k = static_cast<std::size_t>(t * cols + c);
                ASSERT_EQ(back[k], c >= col0 && c < col0 + heads * d ? tok[k] : 0.0f);
            }
    }
}

// Every tensor: the analytic gradient of the largest entries and of two seeded random ones
// against a central difference of the fp32 model loss. h = 1e-2: the loss (~3 nats) is
// rounded to ~3e-7, so the difference carries ~3e-5 of noise; the tolerance allows that
// plus 2% (truncation through GELU/softmax curvature). A wrong or missing term is O(1) off.
