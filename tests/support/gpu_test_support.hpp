// Helpers shared by the GPU kernel tests: seeded host inputs, an elementwise closeness check
// and the skip every device test takes where no GPU is visible.
#pragma once

#include "kernels/random.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

/// Skip the current test, with the reason, when no CUDA device is visible.
#define RINGSCALE_SKIP_WITHOUT_DEVICE()                                                            \
    if (::ringscale::cuda_runtime::cuda_device_count() == 0)                                       \
    GTEST_SKIP() << "no CUDA device visible: GPU tests need a GPU"

namespace ringscale::testing_support {

/// n seeded values scale * uniform_at(seed, k), in [-scale, scale) (kernels::fill_uniform).
inline std::vector<float> seeded(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    kernels::fill_uniform(v.data(), n, seed, 0, scale);
    return v;
}

/// `count` small integers in [-span/2, span/2) from a multiplicative hash of (index, seed):
/// inputs whose products and sums stay exact in fp32 and whose bf16 rounding is exact, for
/// tests that compare Tensor Core results bit for bit.
inline std::vector<float> small_ints(std::size_t count, int seed, int span) {
    std::vector<float> v(count);
    for (std::size_t i = 0; i < count; ++i)
        v[i] =
            static_cast<float>(static_cast<int>((i * 2654435761u + seed * 131u) % span) - span / 2);
    return v;
}

/// x (small integers, see small_ints) as bf16 bits on the device: truncation is exact there.
inline cuda_runtime::device_buffer<std::uint16_t> upload_bf16(const std::vector<float>& x) {
    std::vector<std::uint16_t> bits(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        std::uint32_t u;
        std::memcpy(&u, &x[i], 4);
        bits[i] = static_cast<std::uint16_t>(u >> 16);
    }
    return cuda_runtime::device_buffer<std::uint16_t>(bits);
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
