// fp8 attention's scalars and tolerance (kernels/cudnn_fp8.hpp).
#include "kernels/cudnn_fp8.hpp"

#include <cmath>

namespace ringscale::kernels {

float cudnn_fp8_scale(float amax) {
    if (!(amax > 0) || !std::isfinite(amax))
        return 1.0f;
    return cudnn_fp8_max / amax;
}

cudnn_fp8_scales cudnn_fp8_current_scales(float amax_q, float amax_k, float amax_v) {
    cudnn_fp8_scales s;
    s.scale_q = cudnn_fp8_scale(amax_q);
    s.scale_k = cudnn_fp8_scale(amax_k);
    s.scale_v = cudnn_fp8_scale(amax_v);
    s.descale_q = 1 / s.scale_q;
    s.descale_k = 1 / s.scale_k;
    s.descale_v = 1 / s.scale_v;
    s.scale_s = cudnn_fp8_max; // P lies in [0, 1]
    s.descale_s = 1 / cudnn_fp8_max;
    s.scale_o = s.scale_v; // |O| <= amax(V)
    s.descale_o = s.descale_v;
    return s;
}

cudnn_fp8_scales cudnn_fp8_from_descales(float descale_q, float descale_k, float descale_v) {
    cudnn_fp8_scales s = cudnn_fp8_current_scales(0, 0, 0); // P's, and 1 everywhere else
    s.descale_q = descale_q;
    s.descale_k = descale_k;
    s.descale_v = descale_v;
    s.scale_q = 1 / descale_q;
    s.scale_k = 1 / descale_k;
    s.scale_v = 1 / descale_v;
    s.scale_o = s.scale_v;
    s.descale_o = s.descale_v;
    return s;
}

float cudnn_fp8_output_scale(float amax) {
    if (!(amax > 0) || !std::isfinite(amax))
        return 1.0f;
    return cudnn_fp8_max / (amax * cudnn_fp8_headroom);
}

cudnn_fp8_bwd_scales cudnn_fp8_backward_scales(const cudnn_fp8_scales& fwd, float amax_do,
                                               const cudnn_fp8_bwd_amax& measured) {
    cudnn_fp8_bwd_scales s;
    s.fwd = fwd;
    s.descale_o = fwd.descale_v;
    s.scale_do = cudnn_fp8_scale(amax_do);
    s.descale_do = 1 / s.scale_do;
    s.scale_dp = cudnn_fp8_output_scale(measured.dp);
    s.descale_dp = 1 / s.scale_dp;
    s.scale_dq = cudnn_fp8_output_scale(measured.dq);
    s.scale_dk = cudnn_fp8_output_scale(measured.dk);
    s.scale_dv = cudnn_fp8_output_scale(measured.dv);
    s.descale_dq = 1 / s.scale_dq;
    s.descale_dk = 1 / s.scale_dk;
    s.descale_dv = 1 / s.scale_dv;
    return s;
}

std::array<float, 12> cudnn_fp8_backward_scalars(const cudnn_fp8_bwd_scales& s) {
    return {s.fwd.descale_q, s.fwd.descale_k, s.fwd.descale_v, s.descale_o,
            s.descale_do,    s.fwd.descale_s, s.descale_dp,    s.fwd.scale_s,
            s.scale_dq,      s.scale_dk,      s.scale_dv,      s.scale_dp};
}

double cudnn_fp8_grad_tolerance(double max_abs_ref) {
    return 6 * cudnn_fp8_unit_roundoff * max_abs_ref;
}

double cudnn_fp8_o_tolerance(double max_abs_v) {
    return 4 * cudnn_fp8_unit_roundoff * max_abs_v;
}

} // namespace ringscale::kernels
