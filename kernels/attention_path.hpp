// Which CUDA attention kernels run: the mma.sync kernels (sm80 path: compute capability 8.0
// and up) or the Hopper wgmma/TMA kernels (sm90 path: compute capability 9.0, built only
// when the CUDA architecture list has 90a). The requested path is process-wide
// (`--attn-kernel auto|sm80|sm90`); each call resolves it against the build and the device.
// Free of CUDA types; the parse/resolve logic is built with or without CUDA, and this public
// header is how the launcher and the engine name and resolve the path.
#pragma once

#include <string>

namespace ringscale::kernels {

/// A requested (automatic, sm80, sm90) or resolved (sm80, sm90) attention kernel path.
enum class attn_path { automatic, sm80, sm90 };

/// "auto", "sm80" or "sm90".
const char* to_string(attn_path path);

/// The path named by `text` ("auto", "sm80", "sm90"). Throws config_error naming the option
/// (--attn-kernel) and the accepted values otherwise.
attn_path parse_attn_path(const std::string& text);

/// Set the process-wide requested path (default automatic). Not synchronised with kernels
/// already queued: set it before launching.
void set_attention_path(attn_path path);

/// The process-wide requested path.
attn_path attention_path();

/// True when this build compiled the sm_90a kernels (RINGSCALE_HAVE_SM90A).
bool sm90_compiled();

/// The path `requested` resolves to on a device of compute capability cc_major.cc_minor in
/// a build where the sm_90a kernels are (`compiled`) or are not compiled: automatic gives
/// sm90 when compiled and the device is 9.0, sm80 otherwise; sm80 stays sm80; sm90 throws
/// config_error (one line, saying why) when the build or the device cannot run it.
attn_path resolve_attention_path(attn_path requested, bool compiled, int cc_major, int cc_minor);

/// The process-wide requested path resolved for CUDA device `device` of this build. Throws
/// config_error as above, a cuda error when the device cannot be queried, not_compiled_error
/// without CUDA (kernels/cuda/attention_path_device.cpp, or the not-compiled hooks).
attn_path resolve_attention_path(int device);

} // namespace ringscale::kernels
