// --dtype fp8 for the attention jobs: cuDNN's fp8 attention (E4M3 Q, K, V) on a GPU of compute
// capability 9.0 and up under --attn-kernel cudnn, forward and backward, with current
// per-tensor scaling (kernels/cudnn_fp8.hpp): each of Q, K, V (and dO for the backward) is
// stored as E4M3 of s·x with s = 448 / the amax of the whole global tensor, reduced over the
// ranks at set-up (the inputs do not change between iterations). The rules that refuse a case, the
// scales, and the inputs as the GPU reads them.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/attention_inputs.hpp"
#include "kernels/attention_path.hpp"
#include "src/engine/job.hpp"

#include <array>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// What an fp8 attention case is checked against; cc_major < 0: the GPU is not known yet
/// (the launcher's check before any GPU is bound).
struct fp8_attention_request {
    device_kind device = device_kind::cuda;
    kernels::attn_path kernel = kernels::attn_path::cudnn;
    bool backward = false;       ///< --pass fwd+bwd
    bool merge_in_dtype = false; ///< --merge dtype
    bool accuracy = false;       ///< --accuracy on
    int cc_major = -1, cc_minor = 0;
    std::int64_t head_dim = 128; ///< --head-dim
};

/// Why an fp8 attention case cannot run, one line ("" when it can): not on --device cuda, a
/// kernel other than cudnn, fwd+bwd with a head dimension other than 128 (cuDNN's fp8
/// backward on Hopper), --merge dtype, --accuracy on, a GPU below compute capability 9.0.
/// Pure.
std::string fp8_attention_problem(const fp8_attention_request& r);

/// The rules above for one planned case of `launch` (its --pass and --merge in `p`, the
/// process-wide attention path, --accuracy, the GPU's compute capability): config_error, one
/// line (jobs/attention_dtype.cpp).
void check_fp8_case(const params& p, const launch_info& launch);

/// The per-tensor scales of Q, K, V (index: kernels::attention_tensor q, k, v).
using fp8_tensor_scales = std::array<float, 3>;

/// Current scaling: s = 448 / amax of each global tensor, from this rank's `local_amax` (q, k,
/// v) reduced by max over `c` (collective). An amax of 0 or not finite keeps s = 1.
fp8_tensor_scales fp8_current_scales(comm::communicator& c, const std::array<float, 3>& local_amax);

/// x as the GPU reads it: E4M3 of s·x, divided by s (what the reference computes on).
float fp8_as_read(float x, float scale);

/// Largest |x| of `n` values (NaN ignored).
float amax_of(const float* x, std::size_t n);

} // namespace ringscale::jobs
