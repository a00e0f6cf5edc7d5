// fp8 attention through cuDNN (--dtype fp8 on --device cuda with --attn-kernel cudnn): the
// per-tensor scalars cuDNN's fp8 SDPA graph takes (kernels/cuda/cudnn_graphs.cpp, sdpa_fp8),
// under current per-tensor scaling, and the tolerance of its output against the fp64
// reference. Pure host arithmetic: the tests check it without a GPU.
//  - Q, K, V are stored as E4M3 of s·x with s = 448 / amax of the whole (global) tensor,
//    an amax of 0, inf or NaN keeping s = 1; cuDNN reads them with descale = 1 / s.
//  - P (the softmax, in [0, 1]) is quantised with scale_s = 448, read back with 1 / 448.
//  - O is a convex combination of V's rows, so |O| <= amax(V): O is written with V's scale
//    (no overflow, no second pass for O's own amax) and read back with V's descale.
// The backward (sdpa_fp8_backward) reads Q, K, V as above, the final merged O stored again at
// V's scale, dO in E4M3 (not E5M2: at a current per-tensor scale E4M3's extra mantissa bit
// is the better trade, its range is set by the scale) at s = 448 / amax of the whole dO, P
// at 448 as the forward. Its fp8 outputs (dQ, dK, dV and the score gradient cuDNN calls dP)
// need their scales before the call: each is 448 / (amax · headroom) from the amax cuDNN
// reported the last time the same call ran on the same inputs (a case's inputs do not change
// between iterations). From the third run on they are current scaling's: the first run
// (scales 1) measures dP's amax, the second the outputs' under dP's scale.
#pragma once

#include <array>

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

/// The amaxes one fp8 backward call reports (fp32, before quantisation).
struct cudnn_fp8_bwd_amax {
    float dq = 0, dk = 0, dv = 0, dp = 0;
};

/// The scalars of one fp8 backward call, beyond the forward's (Q, K, V, P).
struct cudnn_fp8_bwd_scales {
    cudnn_fp8_scales fwd;
    float descale_o = 1;                ///< O stored at V's scale
    float scale_do = 1, descale_do = 1; ///< dO's current scale
    float scale_dp = 1, descale_dp = 1; ///< the score gradient's
    float scale_dq = 1, scale_dk = 1, scale_dv = 1;
    float descale_dq = 1, descale_dk = 1, descale_dv = 1;
};

/// An output scale's headroom over the amax it was measured from: 1 + 2^-3 (the next run
/// may round its score gradient differently, by up to u relative).
constexpr float cudnn_fp8_headroom = 1.125f;

/// 448 / (amax · headroom), or 1 when amax is 0, negative, inf or NaN. Pure.
float cudnn_fp8_output_scale(float amax);

/// The backward's scalars: the forward's `fwd` (O at V's scale), dO's from its global amax
/// (cudnn_fp8_scale), the outputs' from the amaxes `measured` on the same call (a zero amax
/// keeps the scale 1). Pure.
cudnn_fp8_bwd_scales cudnn_fp8_backward_scales(const cudnn_fp8_scales& fwd, float amax_do,
                                               const cudnn_fp8_bwd_amax& measured);

/// The backward call's scalars in the order cuDNN's fp8 backward graph takes them (the order
/// of cudnn_sdpa_bwd_args::fp8_scalars): descale Q, K, V, O, dO, descale S (P), descale dP,
/// scale S, scale dQ, dK, dV, dP. Pure.
std::array<float, 12> cudnn_fp8_backward_scalars(const cudnn_fp8_bwd_scales& s);

/// max |dX - dX_ref| bound of each of dQ, dK, dV of the fp8 backward against the fp64
/// reference on the inputs as read, relative to max |dX_ref|: 6u = 0.375 (u = 2^-4; P and
/// the score gradient rounded to E4M3 relative u, O and the output relative u, the
/// cancellation of dP - rowsum(dO · O) with O as stored). Fixed before any GPU ran it.
double cudnn_fp8_grad_tolerance(double max_abs_ref);

} // namespace ringscale::kernels
