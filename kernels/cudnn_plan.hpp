// How one ring step's attention runs as cuDNN SDPA calls: the step's visible (query, key)
// cells, from the rank's query positions, the block's key positions, causal and the mask,
// cut into sub-blocks that are each one cuDNN diagonal band (no mask; causal aligned top-left
// or bottom-right; a sliding window's left and right bounds), merged afterwards by their LSE.
// A step no set of bands covers exactly (block-sparse, dilated, or more calls than allowed)
// is answered with the reason, never run approximately. Pure host code: no CUDA, no cuDNN.
//
// cuDNN's band, row i (query) and column j (key) of a call of q_len x k_len, with
// shift = k_len - q_len for a bottom-right alignment and 0 for top-left: (i, j) is kept iff
// j - shift <= i + right (when a right bound is set; causal is right = 0) and
// j - shift > i - left (when a left bound is set: the sliding window length).
#pragma once

#include "kernels/attention_shape.hpp"
#include "kernels/mask.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::kernels {

/// Where cuDNN's diagonal starts: at (0, 0), or at the bottom-right corner.
enum class cudnn_align { top_left, bottom_right };

/// "top_left" or "bottom_right".
const char* to_string(cudnn_align align);

/// One cuDNN SDPA call's mask. left = 0: no left bound; right = -1: no right bound; right 0
/// is cuDNN's causal mask at `align`.
struct cudnn_band {
    cudnn_align align = cudnn_align::top_left;
    std::int64_t left = 0;
    std::int64_t right = -1;
    bool operator==(const cudnn_band& o) const {
        return align == o.align && left == o.left && right == o.right;
    }
};

/// True when the band has no bound (every cell kept).
inline bool cudnn_band_full(const cudnn_band& b) {
    return b.left == 0 && b.right < 0;
}

/// Whether cuDNN keeps cell (i, j) of a q_len x k_len call under `band`.
inline bool cudnn_band_keeps(const cudnn_band& band, std::int64_t q_len, std::int64_t k_len,
                             std::int64_t i, std::int64_t j) {
    const std::int64_t shift = band.align == cudnn_align::bottom_right ? k_len - q_len : 0;
    if (band.right >= 0 && j - shift > i + band.right)
        return false;
    return band.left <= 0 || j - shift > i - band.left;
}

/// One cuDNN call of a ring step: local query rows [q0, q0 + q_len) against the block's key
/// rows [k0, k0 + k_len), masked by `band` in the call's own coordinates.
struct cudnn_call {
    std::int64_t q0 = 0, q_len = 0, k0 = 0, k_len = 0;
    cudnn_band band;
};

/// A ring step as cuDNN calls. Calls cover disjoint cells; every row of a call sees at least
/// one key (cuDNN's output for a row that sees none is not used). No calls and no reason:
/// nothing is visible in the step. A reason: cuDNN cannot take the step (calls empty).
struct cudnn_step_plan {
    std::vector<cudnn_call> calls;
    std::string fallback;
};

/// Most cuDNN calls a step may take before it falls back (packed documents cut a step into
/// one call per document piece).
constexpr std::size_t cudnn_max_calls_per_step = 64;

/// The calls for queries at global positions q_pos against keys at k_pos (both sorted
/// ascending), under `causal` and `mask` (host arrays). Whole block first, then one call per
/// contiguous run of keys (or of queries), then one per (query run, key run) pair; runs are
/// also cut at document boundaries. The fewest calls win.
cudnn_step_plan plan_cudnn_step(const std::vector<std::int64_t>& q_pos,
                                const std::vector<std::int64_t>& k_pos, bool causal,
                                const mask_view& mask,
                                std::size_t max_calls = cudnn_max_calls_per_step);

/// A call's piece of one of our BHSD tensors as cuDNN's tensor attributes take it: dims and
/// strides in elements (B, H, S, D order) and the piece's first element from the tensor's
/// start. cuDNN reads the piece in place: no copy.
struct cudnn_tensor_view {
    std::int64_t dims[4] = {};
    std::int64_t strides[4] = {};
    std::int64_t offset = 0;
};

/// Q, O, dO, dQ [B, H, q_len, D] rows [q0, q0 + q_len) of the call.
cudnn_tensor_view cudnn_q_view(const attention_shape& shape, const cudnn_call& call);
/// K, V, dK, dV [B, Hkv, k_len, D] rows [k0, k0 + k_len) (GQA: cuDNN's own K/V head count).
cudnn_tensor_view cudnn_kv_view(const attention_shape& shape, const cudnn_call& call);
/// The softmax statistics cuDNN writes (generate_stats) and the backward reads: fp32
/// [B, H, q_len, 1], natural-log LSE, rows [q0, q0 + q_len) of our LSE [B, H, q_len].
cudnn_tensor_view cudnn_stats_view(const attention_shape& shape, const cudnn_call& call);

/// Why cuDNN cannot take the mask at all ("" when it can): block-sparse and dilated masks are
/// not one of cuDNN's (causal, sliding window, documents).
std::string cudnn_mask_problem(const mask_view& mask);

} // namespace ringscale::kernels
