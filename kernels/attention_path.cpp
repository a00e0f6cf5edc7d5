// The attention path's parse/resolve logic: built with or without CUDA (no CUDA calls).
#include "kernels/attention_path.hpp"

#include "src/base/error.hpp"

#include <atomic>
#include <fmt/format.h>

namespace ringscale::kernels {

namespace {
std::atomic<attn_path> g_requested{attn_path::automatic};
} // namespace

const char* to_string(attn_path path) {
    switch (path) {
    case attn_path::sm80:
        return "sm80";
    case attn_path::sm90:
        return "sm90";
    case attn_path::cudnn:
        return "cudnn";
    default:
        return "auto";
    }
}

attn_path parse_attn_path(const std::string& text) {
    for (attn_path p : {attn_path::automatic, attn_path::sm80, attn_path::sm90, attn_path::cudnn})
        if (text == to_string(p))
            return p;
    throw config_error(fmt::format("--attn-kernel: '{}' is not auto, sm80, sm90 or cudnn", text));
}

std::string attention_path_note(attn_path requested) {
    switch (requested) {
    case attn_path::cudnn:
        return "cuDNN fused attention, asked for by name";
    case attn_path::sm80:
    case attn_path::sm90:
        return fmt::format("ringscale's {} kernels, asked for by name", to_string(requested));
    default:
        return "auto keeps ringscale's own kernels (sm90 on a compute capability 9.0 GPU built "
               "with 90a, else sm80) until the cuDNN GPU checks have passed; cuDNN runs with "
               "--attn-kernel cudnn";
    }
}

void set_attention_path(attn_path path) {
    g_requested.store(path);
}

attn_path attention_path() {
    return g_requested.load();
}

bool sm90_compiled() {
#ifdef RINGSCALE_HAVE_SM90A
    return true;
#else
    return false;
#endif
}

void check_attention_path_compiled(attn_path requested, bool compiled) {
    if (requested == attn_path::cudnn && !compiled)
        throw not_compiled_error(
            "--attn-kernel cudnn: cuDNN attention is not compiled into this ringscale (it needs "
            "the CUDA backend, cuDNN and the cuDNN frontend: run tests/install-deps.sh, then "
            "configure and build again)");
}

attn_path resolve_attention_path(attn_path requested, bool sm90, bool cudnn, int cc_major,
                                 int cc_minor) {
    if (requested != attn_path::cudnn)
        return resolve_attention_path(requested, sm90, cc_major, cc_minor);
    check_attention_path_compiled(requested, cudnn);
    if (cc_major < 8)
        throw config_error(fmt::format("--attn-kernel cudnn: needs a compute capability 8.0 or "
                                       "newer GPU, this one is {}.{}",
                                       cc_major, cc_minor));
    return attn_path::cudnn;
}

attn_path resolve_attention_path(attn_path requested, bool compiled, int cc_major, int cc_minor) {
    if (requested == attn_path::cudnn)
        return resolve_attention_path(requested, compiled, false, cc_major, cc_minor);
    // sm_90a code runs on compute capability 9.0 only (arch-specific features).
    const bool hopper = cc_major == 9 && cc_minor == 0;
    switch (requested) {
    case attn_path::sm80:
        return attn_path::sm80;
    case attn_path::sm90:
        if (!compiled)
            throw config_error("--attn-kernel sm90: this ringscale was built without the sm_90a "
                               "target (configure with CMAKE_CUDA_ARCHITECTURES including 90a)");
        if (!hopper)
            throw config_error(fmt::format("--attn-kernel sm90: needs a compute capability 9.0 "
                                           "GPU (H100/H200), this one is {}.{}",
                                           cc_major, cc_minor));
        return attn_path::sm90;
    default:
        return compiled && hopper ? attn_path::sm90 : attn_path::sm80;
    }
}

} // namespace ringscale::kernels
