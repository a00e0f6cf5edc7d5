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

double cudnn_fp8_o_tolerance(double max_abs_v) {
    return 4 * cudnn_fp8_unit_roundoff * max_abs_v;
}

} // namespace ringscale::kernels
