// --dtype fp8 for the attention jobs (jobs/attention_fp8.hpp).
#include "jobs/attention_fp8.hpp"

#include "kernels/cudnn_fp8.hpp"
#include "kernels/elem.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::jobs {

std::string fp8_attention_problem(const fp8_attention_request& r) {
    if (r.device != device_kind::cuda)
        return "--dtype fp8 runs cuDNN's fp8 attention: it needs --device cuda and "
               "--attn-kernel cudnn";
    if (r.kernel != kernels::attn_path::cudnn)
        return fmt::format("--dtype fp8 runs cuDNN's fp8 attention: it needs --attn-kernel cudnn "
                           "(--attn-kernel {}: the sm80 and sm90 kernels take bf16 or fp16)",
                           kernels::to_string(r.kernel));
    if (r.backward && r.head_dim != 128)
        return fmt::format("--dtype fp8 with --pass fwd+bwd: cuDNN's fp8 backward on Hopper takes "
                           "--head-dim 128, not {} (use --pass fwd, or --dtype bf16)",
                           r.head_dim);
    if (r.merge_in_dtype)
        return "--merge dtype with --dtype fp8: the running O stays fp32 between blocks (use "
               "--merge fp32)";
    if (r.accuracy)
        return "--accuracy on with --dtype fp8: the accuracy measurement takes fp32, bf16 or fp16";
    if (r.cc_major >= 0 && r.cc_major < 9)
        return fmt::format("--dtype fp8: cuDNN's fp8 attention needs compute capability 9.0 or "
                           "newer (Hopper), this GPU is {}.{}",
                           r.cc_major, r.cc_minor);
    return "";
}

fp8_tensor_scales fp8_current_scales(comm::communicator& c,
                                     const std::array<float, 3>& local_amax) {
    std::array<float, 3> global{};
    c.allreduce(local_amax.data(), global.data(), 3, comm::dtype::f32, comm::reduce_op::max);
    return {kernels::cudnn_fp8_scale(global[0]), kernels::cudnn_fp8_scale(global[1]),
            kernels::cudnn_fp8_scale(global[2])};
}

float fp8_as_read(float x, float scale) {
    return kernels::round_to_fp8(kernels::fp8_format::e4m3, x * scale) / scale;
}

float amax_of(const float* x, std::size_t n) {
    float m = 0;
    for (std::size_t i = 0; i < n; ++i)
        m = std::fmax(m, std::fabs(x[i]));
    return m;
}

} // namespace ringscale::jobs
