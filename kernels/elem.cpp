#include "kernels/elem.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>

namespace ringscale::kernels {

namespace {

std::uint32_t bits_of(float x) {
    std::uint32_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

float from_bits(std::uint32_t b) {
    float x = 0;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

// Keep the top (23 - drop) mantissa bits, rounding to nearest-even; a carry moves into the
// exponent, and past the largest finite value gives infinity, as the hardware conversion.
float round_mantissa(float x, int drop) {
    const std::uint32_t b = bits_of(x);
    const std::uint32_t half = (1u << (drop - 1)) - 1 + ((b >> drop) & 1u);
    return from_bits((b + half) & ~((1u << drop) - 1u));
}

float round_half(float x) {
    const float a = std::fabs(x);
    if (a >= 65520.0f) // halfway above 65504 and beyond: rounds to infinity
        return std::copysign(INFINITY, x);
    if (a < 0x1p-14f) // subnormal halves: multiples of 2^-24, ties to even (default rounding)
        return std::nearbyint(x * 0x1p24f) * 0x1p-24f;
    return round_mantissa(x, 13);
}

} // namespace

std::size_t elem_bytes(elem e) {
    return e == elem::f32 ? 4 : 2;
}

const char* elem_name(elem e) {
    switch (e) {
    case elem::f32:
        return "float32";
    case elem::bf16:
        return "bfloat16";
    case elem::f16:
        return "float16";
    }
    return "?";
}

const char* elem_short_name(elem e) {
    switch (e) {
    case elem::f32:
        return "fp32";
    case elem::bf16:
        return "bf16";
    case elem::f16:
        return "fp16";
    }
    return "?";
}

elem parse_elem(const std::string& text) {
    for (elem e : {elem::f32, elem::bf16, elem::f16})
        if (text == elem_short_name(e) || text == elem_name(e))
            return e;
    throw config_error(fmt::format("--dtype: '{}' is not fp32, bf16 or fp16", text));
}

float round_to(elem e, float x) {
    if (e == elem::f32 || std::isnan(x) || std::isinf(x))
        return x;
    return e == elem::bf16 ? round_mantissa(x, 16) : round_half(x);
}

float unit_roundoff(elem e) {
    switch (e) {
    case elem::f32:
        return 0x1p-24f;
    case elem::bf16:
        return 0x1p-8f;
    case elem::f16:
        return 0x1p-11f;
    }
    return 0;
}

} // namespace ringscale::kernels
