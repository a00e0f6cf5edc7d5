// Element types of attention inputs (Q, K, V, dO): fp32, bf16 or fp16 (CUDA computes in
// bf16/fp16; the CPU emulates them, kernels/cpu/attention_cpu.hpp), and E4M3 (fp8: cuDNN's
// fp8 attention only, its values stored scaled per tensor, kernels/cudnn_fp8.hpp). Outputs,
// LSE and gradients are always fp32. Host-side rounding to each type, so validation can build the
// reference on exactly the inputs a device saw, and the 2-byte storage of bf16/fp16 values on
// the host (the CPU executor keeps them as a GPU does).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace ringscale::kernels {

enum class elem { f32, bf16, f16, e4m3 };

/// Bytes per element: 4, 2, 2, 1.
std::size_t elem_bytes(elem e);

/// "float32", "bfloat16", "float16", "float8_e4m3": the names the results file records.
const char* elem_name(elem e);

/// The short names: "fp32", "bf16", "fp16", "fp8_e4m3" (--dtype takes "fp8" for it too).
const char* elem_short_name(elem e);

/// Parse fp32|bf16|fp16|fp8 (or the long names); config_error naming the choices otherwise.
elem parse_elem(const std::string& text);

/// x rounded to nearest-even in `e` and widened back to float (exact for f32; overflow
/// gives +-inf, NaN stays NaN; e4m3 saturates at +-448, unscaled: round_to_fp8).
float round_to(elem e, float x);

/// Unit roundoff of `e`: 2^-24 (f32), 2^-8 (bf16), 2^-11 (f16), 2^-4 (e4m3).
float unit_roundoff(elem e);

/// x rounded to nearest-even in bfloat16 (as __float2bfloat16_rn), widened back to float.
/// Branch-free, so loops over it vectorise; NaN stays NaN, +-inf stays +-inf.
inline float round_to_bf16(float x) {
    std::uint32_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    const std::uint32_t r = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
    float y = 0;
    std::memcpy(&y, &r, sizeof y);
    return x != x ? x : y;
}

/// x rounded to nearest-even in IEEE half (as __float2half_rn: subnormals down to 2^-24,
/// |x| >= 65520 to +-inf), widened back to float. Branch-free; NaN stays NaN.
inline float round_to_f16(float x) {
    std::uint32_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    const std::uint32_t n = (b + 0xfffu + ((b >> 13) & 1u)) & 0xffffe000u; // 10 mantissa bits
    float normal = 0;
    std::memcpy(&normal, &n, sizeof normal);
    // Subnormal halves are multiples of 2^-24: adding 1.5 * 2^23 to x * 2^24 (|.| < 2^10)
    // rounds it to an integer, ties to even, in the default rounding mode.
    const float magic = 12582912.0f;
    const float sub = std::copysign(((x * 0x1p24f + magic) - magic) * 0x1p-24f, x); // -0 stays
    const float a = std::fabs(x);
    const float big =
        x < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    const float y = a >= 65520.0f ? big : (a < 0x1p-14f ? sub : normal);
    return x != x ? x : y;
}

/// An 8-bit float format (OCP FP8, as __nv_fp8_e4m3 / __nv_fp8_e5m2): E4M3 (3 mantissa bits,
/// normals from 2^-6, largest 448, no inf) for activations and weights; E5M2 (2 mantissa bits,
/// normals from 2^-14, largest 57344) for gradients.
enum class fp8_format { e4m3, e5m2 };

/// Largest finite value: 448 (E4M3), 57344 (E5M2).
float fp8_max(fp8_format f);

/// x rounded to nearest-even in `f`, subnormals included, saturating to +-fp8_max(f) (as a
/// cast with __NV_SATFINITE, TransformerEngine's), widened back to float. NaN stays NaN;
/// +-inf saturates. -0 stays -0.
float round_to_fp8(fp8_format f, float x);

/// Encode n fp32 values as `e` elements at dst (4 bytes each for f32, 2 for bf16/f16, 1 for
/// e4m3; the bit patterns a GPU stores), rounding to nearest-even (e4m3 saturating, unscaled:
/// the caller multiplies by the tensor's scale first). dst holds n * elem_bytes(e) bytes.
void elem_encode(elem e, const float* src, void* dst, std::size_t n);

/// Decode n `e` elements at src into fp32 (exact). src holds n * elem_bytes(e) bytes.
void elem_decode(elem e, const void* src, float* dst, std::size_t n);

} // namespace ringscale::kernels
