#include "kernels/elem.hpp"

#include "src/base/dtype_names.hpp"
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

} // namespace

std::size_t elem_bytes(elem e) {
    return e == elem::f32 ? 4 : 2;
}

namespace {

/// The element type's row of the dtype table (src/base/dtype_names.hpp): its names and unit
/// roundoff are the ones the reader and the accuracy view use.
const dtypes::dtype_info& info(elem e) {
    static const dtypes::dtype_info* const f32 = dtypes::find("fp32");
    static const dtypes::dtype_info* const bf16 = dtypes::find("bf16");
    static const dtypes::dtype_info* const f16 = dtypes::find("fp16");
    return e == elem::f32 ? *f32 : e == elem::bf16 ? *bf16 : *f16;
}

} // namespace

const char* elem_name(elem e) {
    return info(e).name;
}

const char* elem_short_name(elem e) {
    return info(e).short_name;
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
    return e == elem::bf16 ? round_to_bf16(x) : round_to_f16(x);
}

void elem_encode(elem e, const float* src, void* dst, std::size_t n) {
    if (e == elem::f32) {
        std::memcpy(dst, src, n * sizeof(float));
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
    const auto* in = static_cast<const std::uint16_t*>(src);
    for (std::size_t i = 0; i < n; ++i)
        dst[i] = e == elem::bf16 ? from_bits(static_cast<std::uint32_t>(in[i]) << 16)
                                 : half_value(in[i]);
}

float unit_roundoff(elem e) {
    return static_cast<float>(info(e).unit_roundoff);
}

} // namespace ringscale::kernels
