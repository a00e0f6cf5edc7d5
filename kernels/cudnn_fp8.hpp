// fp8 attention through cuDNN (--dtype fp8 on --device cuda with --attn-kernel cudnn): the
// per-tensor scalars cuDNN's fp8 SDPA graph takes (kernels/cuda/cudnn_graphs.cpp, sdpa_fp8),
// under current per-tensor scaling, and the tolerance of its output against the fp64
// reference. Pure host arithmetic: the tests check it without a GPU.
//  - Q, K, V are stored as E4M3 of s·x with s = 448 / amax of the whole (global) tensor,
//    an amax of 0, inf or NaN keeping s = 1; cuDNN reads them with descale = 1 / s.
//  - P (the softmax, in [0, 1]) is quantised with scale_s = 448, read back with 1 / 448.
//  - O is a convex combination of V's rows, so |O| <= amax(V): O is written with V's scale
//    (no overflow, no second pass for O's own amax) and read back with V's descale.
#pragma once

namespace ringscale::kernels {

/// The scalars of one fp8 forward call.
struct cudnn_fp8_scales {
    float scale_q = 1, scale_k = 1, scale_v = 1;       ///< what the inputs were stored with
    float descale_q = 1, descale_k = 1, descale_v = 1; ///< 1 / those
    float scale_s = 1, descale_s = 1;                  ///< P's
    float scale_o = 1, descale_o = 1;                  ///< O's (V's)
};

/// E4M3's largest finite value, 448.
constexpr float cudnn_fp8_max = 448.0f;

/// E4M3's unit roundoff, 2^-4.
constexpr double cudnn_fp8_unit_roundoff = 0.0625;

/// s = 448 / amax, or 1 when amax is 0, negative, inf or NaN. Pure.
float cudnn_fp8_scale(float amax);

/// The scalars from the global amax of Q, K and V (current scaling). Pure.
cudnn_fp8_scales cudnn_fp8_current_scales(float amax_q, float amax_k, float amax_v);

/// The scalars of inputs stored with descales descale_q, _k, _v (attention_shape's). Pure.
cudnn_fp8_scales cudnn_fp8_from_descales(float descale_q, float descale_k, float descale_v);

/// |O - O_ref| bound of the fp8 forward against the fp64 reference computed on the inputs as
/// the GPU read them (E4M3 of s·x, divided by s): 4u · max|V| with u = 2^-4 (P rounded to E4M3
/// relative u, O written in E4M3 at V's scale: u · max|V|, and the rounding of those sums),
/// 0.25 · max|V|. Fixed before any GPU ran it.
double cudnn_fp8_o_tolerance(double max_abs_v);

} // namespace ringscale::kernels
