// The CPU transposes around the training step's attention (kernels/cpu/layout_bhsd): token-major
// columns to BHSD and back, exactly, other columns untouched.
#include "kernels/cpu/layout_bhsd.hpp"

#include <gtest/gtest.h>

#include <numeric>
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

// Every tensor: the analytic gradient of the largest entries and of two seeded random ones
// against a central difference of the fp32 model loss. h = 1e-2: the loss (~3 nats) is
// rounded to ~3e-7, so the difference carries ~3e-5 of noise; the tolerance allows that
// plus 2% (truncation through GELU/softmax curvature). A wrong or missing term is O(1) off.
