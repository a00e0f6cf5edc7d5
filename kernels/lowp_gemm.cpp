#include "kernels/lowp_gemm.hpp"

#include "kernels/cuda/lowp_plan.hpp"

namespace ringscale::kernels {

std::string lowp_device_refusal(lowp_type t, int cc_major, int cc_minor) {
    const std::string cc = std::to_string(cc_major) + "." + std::to_string(cc_minor);
    if (cc_major < 8)
        return "low-precision GEMMs need a GPU of compute capability 8.0 or newer (this one is " +
               cc + ")";
    if (t == lowp_type::fp8 && cc_major != 9)
        return "--dtype fp8 on the GPU needs Hopper (compute capability 9.x) for its fp8 GEMMs "
               "(this GPU is " +
               cc + "); run --dtype bf16 there";
    return "";
}

std::string lowp_shape_refusal(lowp_type t, const linear_shape& s) {
    using cuda::lowp_pass;
    for (lowp_pass p : {lowp_pass::fwd, lowp_pass::dx, lowp_pass::dw}) {
        std::string why = cuda::lt_refusal(cuda::plan_lowp_gemm(t, s, p).shape);
        if (!why.empty())
            return why;
    }
    return "";
}

} // namespace ringscale::kernels
