// Which CUDA attention kernels run: the mma.sync kernels (sm80 path: compute capability 8.0
// and up), the Hopper wgmma/TMA kernels (sm90 path: compute capability 9.0, built only
// when the CUDA architecture list has 90a) or cuDNN's fused attention (cudnn path: compute
// capability 8.0 and up, built only where cuDNN and its frontend were found; asked for by
// name: auto does not pick it). The requested path is process-wide
// (`--attn-kernel auto|sm80|sm90|cudnn`); each call resolves it against the build and the
// device.
// Free of CUDA types; the parse/resolve logic is built with or without CUDA, and this public
// header is how the launcher and the engine name and resolve the path.
#pragma once

#include <string>

namespace ringscale::kernels {

/// A requested (automatic, sm80, sm90, cudnn) or resolved (sm80, sm90, cudnn) attention
/// kernel path.
enum class attn_path { automatic, sm80, sm90, cudnn };

/// "auto", "sm80", "sm90" or "cudnn".
const char* to_string(attn_path path);

/// The path named by `text` ("auto", "sm80", "sm90", "cudnn"). Throws config_error naming the
/// option (--attn-kernel) and the accepted values otherwise.
attn_path parse_attn_path(const std::string& text);

/// Why `requested` runs what it runs, one line for the results (attn_kernel_note): auto keeps
/// our own kernels until cuDNN's GPU checks have passed; a path named is asked for by name.
std::string attention_path_note(attn_path requested);

/// Set the process-wide requested path (default automatic). Not synchronised with kernels
/// already queued: set it before launching.
void set_attention_path(attn_path path);

/// The process-wide requested path.
attn_path attention_path();

/// True when this build compiled the sm_90a kernels (RINGSCALE_HAVE_SM90A).
bool sm90_compiled();

/// True when this build compiled cuDNN's fused attention (CUDA, cuDNN and the cuDNN frontend
/// found at configure time): kernels/cuda/cudnn_info.cpp, else the not-compiled hooks
/// (kernels/device_hooks/cudnn_hooks.cpp).
bool cudnn_compiled();

/// The cuDNN library loaded at run time ("9.19.0"), "" without cuDNN. Never throws.
std::string cudnn_runtime_version();

/// The cuDNN frontend compiled in ("1.32.0"), "" without it.
std::string cudnn_frontend_version();

/// Throws not_compiled_error (one line, naming the fix) when `requested` is cudnn and
/// `compiled` (cudnn_compiled()) is false; the launcher asks before any GPU is bound.
void check_attention_path_compiled(attn_path requested, bool compiled);

/// The path `requested` resolves to on a device of compute capability cc_major.cc_minor,
/// given whether the sm_90a kernels (`sm90`) and cuDNN (`cudnn`) are compiled: as the
/// overload below for automatic, sm80 and sm90 (automatic never gives cudnn); cudnn stays
/// cudnn, or throws not_compiled_error without cuDNN and config_error below compute
/// capability 8.0.
attn_path resolve_attention_path(attn_path requested, bool sm90, bool cudnn, int cc_major,
                                 int cc_minor);

/// The path `requested` resolves to on a device of compute capability cc_major.cc_minor in
/// a build where the sm_90a kernels are (`compiled`) or are not compiled: automatic gives
/// sm90 when compiled and the device is 9.0, sm80 otherwise; sm80 stays sm80; sm90 throws
/// config_error (one line, saying why) when the build or the device cannot run it; cudnn
/// resolves as in a build without cuDNN.
attn_path resolve_attention_path(attn_path requested, bool compiled, int cc_major, int cc_minor);

/// The process-wide requested path resolved for CUDA device `device` of this build. Throws
/// config_error as above, a cuda error when the device cannot be queried, not_compiled_error
/// without CUDA (kernels/cuda/attention_path_device.cpp, or the not-compiled hooks).
attn_path resolve_attention_path(int device);

} // namespace ringscale::kernels
