// Which attention kernel a case runs on a GPU, and why: the table of what cuDNN's fused
// attention takes (mask kind x dtype x compute capability x cuDNN version) and the choice
// between it and our own kernels under --attn-kernel. Pure host code: the tests walk every
// row of the table without a GPU.
#pragma once

#include "kernels/attention_path.hpp"

#include <cstdint>
#include <string>

namespace ringscale::kernels {

/// The mask of a case as the table sees it.
enum class attn_mask_kind { none, causal, window, documents, block_sparse, dilated };

/// "none", "causal", "window", "documents", "block_sparse", "dilated".
const char* to_string(attn_mask_kind kind);

/// Element types of Q, K, V on a GPU; fp8 is E4M3 with per-tensor scales.
enum class attn_dtype_kind { fp32, bf16, fp16, fp8 };

/// "fp32", "bf16", "fp16", "fp8".
const char* to_string(attn_dtype_kind kind);

/// One case as the choice sees it. cudnn_version is cuDNN's integer (9.19.0 = 91900; 0: no
/// cuDNN loaded). causal and k_len matter for cuDNN 9.14.0's sliding-window bug.
struct attn_case_traits {
    attn_mask_kind mask = attn_mask_kind::causal;
    attn_dtype_kind dtype = attn_dtype_kind::bf16;
    int cc_major = 9, cc_minor = 0;
    int cudnn_version = 0;
    bool causal = true;
    std::int64_t k_len = 0;
};

/// Why cuDNN's fused attention cannot take the case ("" when it can), one line.
std::string cudnn_unsupported_reason(const attn_case_traits& c);

/// The kernel a case runs and the reason, as recorded (attn_kernel, attn_kernel_note).
struct attn_kernel_choice {
    attn_path kernel = attn_path::sm80;
    std::string note;
};

/// The kernel for `c` under `requested` (resolved against the build: sm90_built, cudnn_built):
/// cudnn runs cuDNN where it takes the case and throws config_error with the reason where it
/// does not (one line); automatic keeps our kernels (sm90 on a 9.0 device when built and
/// no mask beyond causal, else sm80) and says why, cuDNN's own reason included; sm80 and
/// sm90 are kept (a mask beyond causal runs sm80: the sm90 kernels take none).
attn_kernel_choice choose_attention_kernel(const attn_case_traits& c, attn_path requested,
                                           bool sm90_built, bool cudnn_built);

/// "9.19.0" of 91900 (cuDNN's version integer: major * 10000 + minor * 100 + patch).
std::string cudnn_version_text(int version);

} // namespace ringscale::kernels
