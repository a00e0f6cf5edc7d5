// Element types of attention inputs (Q, K, V, dO): fp32 on the CPU, bf16 or fp16 on CUDA.
// Outputs, LSE and gradients are always fp32. Host-side rounding to each type, so
// validation can build the reference on exactly the inputs a device saw.
#pragma once

#include <cstddef>
#include <string>

namespace ringscale::kernels {

enum class elem { f32, bf16, f16 };

/// Bytes per element: 4, 2, 2.
std::size_t elem_bytes(elem e);

/// "float32", "bfloat16", "float16": the names the results file records.
const char* elem_name(elem e);

/// The short names --dtype takes: "fp32", "bf16", "fp16".
const char* elem_short_name(elem e);

/// Parse fp32|bf16|fp16 (or the long names); config_error naming the choices otherwise.
elem parse_elem(const std::string& text);

/// x rounded to nearest-even in `e` and widened back to float (exact for f32; overflow
/// gives +-inf, NaN stays NaN).
float round_to(elem e, float x);

/// Unit roundoff of `e`: 2^-24 (f32), 2^-8 (bf16), 2^-11 (f16).
float unit_roundoff(elem e);

} // namespace ringscale::kernels
