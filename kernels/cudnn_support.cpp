// What cuDNN's fused attention takes, and the kernel each case runs (kernels/cudnn_support.hpp).
// The version rows follow the cuDNN frontend's own checks (its SDPA support surface): fp16/bf16
// blocked on 9.10.0 and 9.10.1, fp8 forward on 9.10.0, the 9.14.0 sliding-window bug.
#include "kernels/cudnn_support.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::kernels {

namespace {

// The reasons that do not depend on the version.
std::string shape_reason(const attn_case_traits& c) {
    if (c.mask == attn_mask_kind::block_sparse)
        return "block-sparse masks are not cuDNN's (it takes causal, sliding-window and "
               "document masks)";
    if (c.mask == attn_mask_kind::dilated)
        return "dilated masks are not cuDNN's (it takes causal, sliding-window and document "
               "masks)";
    if (c.cc_major < 8)
        return fmt::format("cuDNN's fused attention needs compute capability 8.0 or newer, this "
                           "GPU is {}.{}",
                           c.cc_major, c.cc_minor);
    if (c.dtype == attn_dtype_kind::fp32)
        return "cuDNN's fused attention takes bf16, fp16 or fp8, not fp32";
    if (c.dtype == attn_dtype_kind::fp8 && c.cc_major < 9)
        return fmt::format("cuDNN's fp8 attention needs compute capability 9.0 or newer (Hopper), "
                           "this GPU is {}.{}",
                           c.cc_major, c.cc_minor);
    return "";
}

std::string version_reason(const attn_case_traits& c) {
    const int v = c.cudnn_version;
    if (v <= 0)
        return "no cuDNN library is loaded";
    if (v < 90000)
        return fmt::format("cuDNN {} is older than 9.0.0", cudnn_version_text(v));
    const bool half = c.dtype == attn_dtype_kind::bf16 || c.dtype == attn_dtype_kind::fp16;
    if (half && (v == 91000 || v == 91001))
        return fmt::format("cuDNN {} blocks fp16/bf16 fused attention (known bugs; 9.10.2 or "
                           "newer)",
                           cudnn_version_text(v));
    if (c.dtype == attn_dtype_kind::fp8 && v < 90100)
        return fmt::format("cuDNN {} has no fp8 attention (9.1.0 or newer)", cudnn_version_text(v));
    if (c.dtype == attn_dtype_kind::fp8 && v == 91000)
        return "cuDNN 9.10.0 blocks fp8 attention forward (known bug; 9.10.1 or newer)";
    if (v == 91400 && c.mask == attn_mask_kind::window && !c.causal && c.k_len > 1024)
        return "cuDNN 9.14.0 has a known bug with a non-causal sliding window over more than "
               "1024 keys (9.14.1 or newer)";
    return "";
}

} // namespace

const char* to_string(attn_mask_kind kind) {
    switch (kind) {
    case attn_mask_kind::none:
        return "none";
    case attn_mask_kind::causal:
        return "causal";
    case attn_mask_kind::window:
        return "window";
    case attn_mask_kind::documents:
        return "documents";
    case attn_mask_kind::block_sparse:
        return "block_sparse";
    default:
        return "dilated";
    }
}

const char* to_string(attn_dtype_kind kind) {
    switch (kind) {
    case attn_dtype_kind::fp32:
        return "fp32";
    case attn_dtype_kind::bf16:
        return "bf16";
    case attn_dtype_kind::fp16:
        return "fp16";
    default:
        return "fp8";
    }
}

std::string cudnn_version_text(int version) {
    return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}

std::string cudnn_unsupported_reason(const attn_case_traits& c) {
    std::string why = shape_reason(c);
    return why.empty() ? version_reason(c) : why;
}

attn_kernel_choice choose_attention_kernel(const attn_case_traits& c, attn_path requested,
                                           bool sm90_built, bool cudnn_built) {
    const bool beyond_causal = c.mask != attn_mask_kind::none && c.mask != attn_mask_kind::causal;
    const bool hopper = c.cc_major == 9 && c.cc_minor == 0;
    if (requested == attn_path::cudnn) {
        check_attention_path_compiled(requested, cudnn_built);
        const std::string why = cudnn_unsupported_reason(c);
        if (!why.empty())
            throw config_error("--attn-kernel cudnn: " + why);
        return {attn_path::cudnn, attention_path_note(requested)};
    }
    if (requested == attn_path::sm80 || requested == attn_path::sm90) {
        if (requested == attn_path::sm90 && beyond_causal)
            return {attn_path::sm80, "a mask beyond causal runs the sm80 kernels (the sm90 "
                                     "kernels take none)"};
        return {requested, attention_path_note(requested)};
    }
    attn_kernel_choice out;
    out.kernel = sm90_built && hopper && !beyond_causal ? attn_path::sm90 : attn_path::sm80;
    const std::string why = cudnn_built ? cudnn_unsupported_reason(c) : "cuDNN is not compiled in";
    out.note = attention_path_note(requested);
    if (!why.empty())
        out.note += "; cuDNN could not take this case: " + why;
    return out;
}

} // namespace ringscale::kernels
