// kernels/elem: rounding to the 8-bit formats, against exact values (round to nearest-even,
// subnormals, saturation at the largest finite value, NaN and signed zero).
#include "kernels/elem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

using ringscale::kernels::fp8_format;
using ringscale::kernels::fp8_max;
using ringscale::kernels::round_to_fp8;
using namespace ringscale::kernels;

TEST(ElemFp8, E4m3RoundsToNearestEven) {
    const auto r = [](float x) { return round_to_fp8(fp8_format::e4m3, x); };
    EXPECT_EQ(r(1.0f), 1.0f);
    EXPECT_EQ(r(1.0625f), 1.0f);  // half an ulp (2^-3) above 1: tie -> even mantissa
    EXPECT_EQ(r(1.1875f), 1.25f); // 9.5 ulps -> 10
    EXPECT_EQ(r(0.3f), 0.3125f);  // [0.25, 0.5): ulp 2^-5, 9.6 -> 10
    EXPECT_EQ(r(-0.3f), -0.3125f);
    EXPECT_EQ(r(440.0f), 448.0f);   // [256, 512): ulp 32, 13.75 -> 14
    EXPECT_EQ(r(0x1p-6f), 0x1p-6f); // smallest normal
}

TEST(ElemFp8, E4m3SubnormalsAndSaturation) {
    const auto r = [](float x) { return round_to_fp8(fp8_format::e4m3, x); };
    EXPECT_EQ(r(0x1p-9f), 0x1p-9f);          // smallest subnormal
    EXPECT_EQ(r(0x1p-10f), 0.0f);            // a tie between 0 and 2^-9: even (0)
    EXPECT_EQ(r(3 * 0x1p-11f), 0x1p-9f);     // 0.75 of the smallest -> it
    EXPECT_EQ(r(5 * 0x1p-10f), 0x1p-8f);     // 2.5 subnormal ulps -> 2
    EXPECT_TRUE(std::signbit(r(-0x1p-11f))); // rounds to -0
    EXPECT_EQ(fp8_max(fp8_format::e4m3), 448.0f);
    EXPECT_EQ(r(500.0f), 448.0f);
    EXPECT_EQ(r(-1e30f), -448.0f);
    EXPECT_EQ(r(INFINITY), 448.0f);
    EXPECT_TRUE(std::isnan(r(NAN)));
}

TEST(ElemFp8, E5m2RoundsSubnormalsAndSaturates) {
    const auto r = [](float x) { return round_to_fp8(fp8_format::e5m2, x); };
    EXPECT_EQ(r(1.1f), 1.0f);             // ulp 2^-2: 4.4 -> 4
    EXPECT_EQ(r(1.125f), 1.0f);           // 4.5: tie -> 4
    EXPECT_EQ(r(1.375f), 1.5f);           // 5.5: tie -> 6
    EXPECT_EQ(r(3 * 0x1p-18f), 0x1p-16f); // smallest subnormal 2^-16
    EXPECT_EQ(r(0x1p-17f), 0.0f);         // a tie: even (0)
    EXPECT_EQ(r(0x1p-14f), 0x1p-14f);     // smallest normal
    EXPECT_EQ(fp8_max(fp8_format::e5m2), 57344.0f);
    EXPECT_EQ(r(60000.0f), 57344.0f);
    EXPECT_EQ(r(-1e5f), -57344.0f);
    EXPECT_EQ(r(-INFINITY), -57344.0f);
    EXPECT_EQ(r(0.0f), 0.0f);
}

// elem::e4m3 (fp8 attention's storage): every E4M3 bit pattern decodes to a value that encodes
// back to the same bits (NaN to NaN), values round to nearest-even and saturate at 448, and
// --dtype's names parse to it.
TEST(ElemFp8, E4m3ElementsRoundTripEveryBitPattern) {
    EXPECT_EQ(elem_bytes(elem::e4m3), 1u);
    for (unsigned b = 0; b < 256; ++b) {
        const auto bits = static_cast<std::uint8_t>(b);
        float x = 0;
        elem_decode(elem::e4m3, &bits, &x, 1);
        if ((b & 0x7fu) == 0x7fu) {
            EXPECT_TRUE(std::isnan(x)) << b;
            continue;
        }
        EXPECT_EQ(round_to(elem::e4m3, x), x) << b;
        std::uint8_t back = 0;
        elem_encode(elem::e4m3, &x, &back, 1);
        EXPECT_EQ(back, bits) << b << " = " << x;
    }
    const float in[] = {1.0f, 1.0625f, 500.0f, -0x1p-9f, 0.3f};
    std::uint8_t bits[5] = {};
    float out[5] = {};
    elem_encode(elem::e4m3, in, bits, 5);
    elem_decode(elem::e4m3, bits, out, 5);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], 1.0f); // a tie: even
    EXPECT_EQ(out[2], 448.0f);
    EXPECT_EQ(out[3], -0x1p-9f); // smallest subnormal
    EXPECT_EQ(out[4], round_to_fp8(fp8_format::e4m3, 0.3f));
    EXPECT_EQ(parse_elem("fp8"), elem::e4m3);
    EXPECT_EQ(parse_elem(elem_name(elem::e4m3)), elem::e4m3);
    EXPECT_EQ(parse_elem(elem_short_name(elem::e4m3)), elem::e4m3);
    EXPECT_FLOAT_EQ(unit_roundoff(elem::e4m3), 0x1p-4f);
}
