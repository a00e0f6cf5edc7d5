// Helpers shared by the GPU kernel tests: seeded host inputs, an elementwise closeness check
// and the skip every device test takes where no GPU is visible.
#pragma once

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/random.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

/// Skip the current test, with the reason, when no CUDA device is visible.
#define RINGSCALE_SKIP_WITHOUT_DEVICE()                                                            \
    if (::ringscale::kernels::cuda::cuda_device_count() == 0)                                      \
    GTEST_SKIP() << "no CUDA device visible: GPU tests need a GPU"

namespace ringscale::testing_support {

/// n seeded values scale * uniform_at(seed, k), in [-scale, scale) (kernels::fill_uniform).
inline std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    kernels::fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

/// |got − want| <= atol + rtol·|want| elementwise; infinities must match exactly.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, float atol,
                         float rtol, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isinf(want[i])) {
            EXPECT_EQ(got[i], want[i]) << what << " at " << i;
            continue;
        }
        EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << what << " at " << i;
    }
}

} // namespace ringscale::testing_support
