// Elementwise math the CPU kernels' loops share, written so that GCC vectorises the loops that
// call it (no libm call per element, no branch), and the attribute that compiles a hot loop for
// AVX-512, AVX2+FMA and baseline x86-64 with the loader picking one at run time (ifunc). The
// default build targets baseline x86-64 (SSE2), so without it these loops run 4 lanes wide.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RINGSCALE_VEC_CLONES                                                                       \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RINGSCALE_VEC_CLONES
#endif

namespace ringscale::kernels::cpu {

/// e^x in fp32 for x in [-87, 87] (the caller keeps it there): Cephes' expf reduction
/// x = n·ln2 + r and degree-6 polynomial, ~1 ulp.
inline __attribute__((always_inline)) float exp_poly(float x) {
    // Round x/ln2 to the nearest integer without a branch: adding 1.5·2^23 leaves no fraction
    // bits (|x/ln2| < 2^22), subtracting it again gives the rounded value.
    const float fn = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const auto n = static_cast<std::int32_t>(fn);
    const float r = (x - fn * 0.693359375f) + fn * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float y = p * r * r + r + 1.0f;
    const std::int32_t bits = (n + 127) << 23; // 2^n
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

/// e^x in fp64 for x <= 0, a few ulp: x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two so
/// that n·ln2 is exact), e^r by its Taylor series to r^13 (the next term is below 2^-53 of
/// e^r), 2^n built in the exponent bits. x below -708 gives e^-708 (~3e-308) rather than a
/// subnormal or 0, and NaN stays NaN.
inline __attribute__((always_inline)) double exp_poly_d(double x) {
    x = x < -708.0 ? -708.0 : x;
    // Adding 1.5·2^52 rounds x/ln2 to an integer n, left in the low bits of t's mantissa.
    const double magic = 6755399441055744.0;
    const double t = x * 1.4426950408889634 + magic;
    const double fn = t - magic;
    const double r = (x - fn * 6.93147180369123816490e-01) - fn * 1.90821492927058770002e-10;
    double p = 1.0 / 6227020800.0; // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    std::int64_t t_bits, magic_bits; // n from the bits, not a conversion: AVX2 has none
    std::memcpy(&t_bits, &t, sizeof t);
    std::memcpy(&magic_bits, &magic, sizeof magic);
    const std::int64_t bits = (t_bits - magic_bits + 1023) * (std::int64_t{1} << 52); // 2^n
    double scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/// 2^x for x <= ~0 (clamped below at -126): round-to-nearest split x = n + f, |f| <= 1/2,
/// Cephes' degree-6 polynomial for 2^f (relative error ~2e-7), 2^n built in the exponent
/// bits. Branch-free, so GCC vectorises loops that call it.
inline __attribute__((always_inline)) float exp2_poly(float x) {
    x = x < -126.0f ? -126.0f : x;
    const float magic = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
    const float t = x + magic;
    const float f = x - (t - magic);
    float p = 1.535336188319500e-4f;
    p = p * f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    p = p * f + 1.0f;
    std::int32_t t_bits, magic_bits;
    std::memcpy(&t_bits, &t, sizeof(t));
    std::memcpy(&magic_bits, &magic, sizeof(magic));
    const std::int32_t bits = (t_bits - magic_bits + 127) * (1 << 23);
    float two_n;
    std::memcpy(&two_n, &bits, sizeof(bits));
    return p * two_n;
}

} // namespace ringscale::kernels::cpu
