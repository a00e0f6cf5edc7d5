// The cuDNN frontend graphs of one SDPA call (kernels/cudnn_sdpa.hpp): tensors addressed
// through the call's views of our BHSD tensors, the band as cuDNN's diagonal alignment and
// bounds, the statistics as fp32 natural-log LSE. Only kernels/cuda/cudnn_*.cpp include this
// (it brings in the frontend's headers).
#pragma once

#include "kernels/cudnn_sdpa.hpp"

#include <cudnn_frontend.h>

#include <memory>

namespace ringscale::kernels::cuda {

/// The graph tensors' uids: the variant pack's keys.
namespace uid {
constexpr std::int64_t q = 1, k = 2, v = 3, o = 4, stats = 5, d_o = 6, dq = 7, dk = 8, dv = 9;
constexpr std::int64_t descale_q = 10, descale_k = 11, descale_v = 12, descale_s = 13;
constexpr std::int64_t scale_s = 14, scale_o = 15, amax_s = 16, amax_o = 17;
constexpr std::int64_t descale_o = 18, descale_do = 19, descale_dp = 20, scale_dq = 21;
constexpr std::int64_t scale_dk = 22, scale_dv = 23, scale_dp = 24, amax_dq = 25, amax_dk = 26;
constexpr std::int64_t amax_dv = 27, amax_dp = 28;
} // namespace uid

/// Bytes of one element of `dtype` as cuDNN stores it (fp8: 1).
std::size_t cudnn_elem_bytes(attn_dtype_kind dtype);

/// Throws error(cuda) with the frontend's message (one line) unless `status` is good.
void check_frontend(cudnn_frontend::error_t status, const char* what);

/// The forward graph (sdpa with generate_stats; fp8: sdpa_fp8 with its scales and amax),
/// validated; the caller builds its plans.
std::shared_ptr<cudnn_frontend::graph::Graph> build_sdpa_fwd_graph(const cudnn_sdpa_call& c);

/// The backward graph (sdpa_backward from O, dO and the merged statistics; fp8:
/// sdpa_fp8_backward with E4M3 O and dO, its descales, scales and amax), validated.
std::shared_ptr<cudnn_frontend::graph::Graph> build_sdpa_bwd_graph(const cudnn_sdpa_call& c);

} // namespace ringscale::kernels::cuda
