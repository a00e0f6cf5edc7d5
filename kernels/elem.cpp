#include "kernels/elem.hpp"

#include "src/base/dtype_names.hpp"
#include "src/base/error.hpp"

#include <algorithm>
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

/// IEEE half bits of a float that is already a half value (round_to_f16's result).
std::uint16_t half_bits(float h) {
    const std::uint32_t b = bits_of(h);
    const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
    const float a = std::fabs(h);
    if (a != a)
        return static_cast<std::uint16_t>(sign | 0x7e00u);
    if (a == INFINITY)
        return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (a < 0x1p-14f) // subnormal (or zero): a multiple of 2^-24
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(a * 0x1p24f));
    const std::uint32_t ab = bits_of(a);
    const std::uint32_t exp = ((ab >> 23) & 0xffu) - 127u + 15u;
    return static_cast<std::uint16_t>(sign | (exp << 10) | ((ab >> 13) & 0x3ffu));
}

float half_value(std::uint16_t h) {
    const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    const unsigned exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0)
        return sign * static_cast<float>(man) * 0x1p-24f;
    if (exp == 31)
        return man ? NAN : sign * INFINITY;
    return sign * std::ldexp(1.0f + static_cast<float>(man) * 0x1p-10f, static_cast<int>(exp) - 15);
}

/// E4M3 bits of a value round_to_fp8(e4m3) gave (sign, 4 exponent bits with bias 7, 3
/// mantissa bits; exponent field 0: subnormals, multiples of 2^-9).
std::uint8_t e4m3_bits(float x) {
    const auto sign = static_cast<std::uint8_t>(std::signbit(x) ? 0x80u : 0u);
    const float a = std::fabs(x);
    if (a != a)
        return static_cast<std::uint8_t>(sign | 0x7fu); // E4M3's NaN
    if (a < 0x1p-6f)
        return static_cast<std::uint8_t>(sign | static_cast<unsigned>(a * 0x1p9f));
    int e = 0;
    const float m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
    const auto field = static_cast<unsigned>(e - 1 + 7);
    const auto mant = static_cast<unsigned>((m * 2 - 1) * 8);
    return static_cast<std::uint8_t>(sign | field << 3 | mant);
}

float e4m3_value(std::uint8_t b) {
    const unsigned field = (b >> 3) & 15u, mant = b & 7u;
    if (field == 15 && mant == 7)
        return NAN;
    const float mag =
        field == 0 ? static_cast<float>(mant) * 0x1p-9f
                   : std::ldexp(1 + static_cast<float>(mant) / 8, static_cast<int>(field) - 7);
    return (b & 0x80u) ? -mag : mag;
}

} // namespace

std::size_t elem_bytes(elem e) {
    return e == elem::f32 ? 4 : e == elem::e4m3 ? 1 : 2;
}

namespace {

/// The element type's row of the dtype table (src/base/dtype_names.hpp): its names and unit
/// roundoff are the ones the reader and the accuracy view use.
const dtypes::dtype_info& info(elem e) {
    static const dtypes::dtype_info* const f32 = dtypes::find("fp32");
    static const dtypes::dtype_info* const bf16 = dtypes::find("bf16");
    static const dtypes::dtype_info* const f16 = dtypes::find("fp16");
    static const dtypes::dtype_info* const e4m3 = dtypes::find("fp8_e4m3");
    return e == elem::f32 ? *f32 : e == elem::bf16 ? *bf16 : e == elem::f16 ? *f16 : *e4m3;
}

} // namespace

const char* elem_name(elem e) {
    return info(e).name;
}

const char* elem_short_name(elem e) {
    return info(e).short_name;
}

elem parse_elem(const std::string& text) {
    if (text == "fp8")
        return elem::e4m3;
    for (elem e : {elem::f32, elem::bf16, elem::f16, elem::e4m3})
        if (text == elem_short_name(e) || text == elem_name(e))
            return e;
    throw config_error(fmt::format("--dtype: '{}' is not fp32, bf16, fp16 or fp8", text));
}

float round_to(elem e, float x) {
    if (e == elem::e4m3)
        return round_to_fp8(fp8_format::e4m3, x);
    if (e == elem::f32 || std::isnan(x) || std::isinf(x))
        return x;
    return e == elem::bf16 ? round_to_bf16(x) : round_to_f16(x);
}

void elem_encode(elem e, const float* src, void* dst, std::size_t n) {
    if (e == elem::f32) {
        std::memcpy(dst, src, n * sizeof(float));
        return;
    }
    if (e == elem::e4m3) {
        auto* out = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < n; ++i)
            out[i] = e4m3_bits(round_to_fp8(fp8_format::e4m3, src[i]));
        return;
    }
    auto* out = static_cast<std::uint16_t*>(dst);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = e == elem::bf16 ? static_cast<std::uint16_t>(bits_of(round_to_bf16(src[i])) >> 16)
                                 : half_bits(round_to_f16(src[i]));
}

void elem_decode(elem e, const void* src, float* dst, std::size_t n) {
    if (e == elem::f32) {
        std::memcpy(dst, src, n * sizeof(float));
        return;
    }
    if (e == elem::e4m3) {
        const auto* in = static_cast<const std::uint8_t*>(src);
        for (std::size_t i = 0; i < n; ++i)
            dst[i] = e4m3_value(in[i]);
        return;
    }
    const auto* in = static_cast<const std::uint16_t*>(src);
    for (std::size_t i = 0; i < n; ++i)
        dst[i] = e == elem::bf16 ? from_bits(static_cast<std::uint32_t>(in[i]) << 16)
                                 : half_value(in[i]);
}

float fp8_max(fp8_format f) {
    return f == fp8_format::e4m3 ? 448.0f : 57344.0f;
}

float round_to_fp8(fp8_format f, float x) {
    if (x != x)
        return x;
    const int mantissa = f == fp8_format::e4m3 ? 3 : 2;
    const int min_exp = f == fp8_format::e4m3 ? -6 : -14; // of the smallest normal
    const float big = fp8_max(f);
    const float a = std::fabs(x);
    if (a >= big)
        return std::copysign(big, x);
    if (a == 0)
        return x;
    int e = 0;
    std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
    const int quantum = std::max(e - 1, min_exp) - mantissa;
    // a / 2^quantum < 2^(mantissa+1): exact in float; nearbyint rounds ties to even.
    const float r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);
    return std::copysign(std::min(r, big), x);
}

float unit_roundoff(elem e) {
    return static_cast<float>(info(e).unit_roundoff);
}

} // namespace ringscale::kernels
