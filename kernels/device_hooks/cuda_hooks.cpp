// The CUDA backend where CUDA is not built (Ginkgo's core/device_hooks): the same API as
// kernels/cuda, so everything links, and every call that would need a GPU throws
// not_compiled_error naming itself. The kernels come from their one list
// (kernels/kernels.inc); the few other CUDA entry points follow it by hand. Compiled instead of
// kernels/cuda/*.cpp and *.cu; the only place that says "not compiled" for the CUDA backend.
#include "kernels/attention_path.hpp"
#include "kernels/cuda/backend.hpp"
#include "kernels/gpu.hpp"
#include "src/base/error.hpp"

#include <string>

namespace ringscale::kernels {

namespace {

[[noreturn]] void not_compiled(const std::string& what, const char* fix = "") {
    throw not_compiled_error(what + ": the CUDA backend is not compiled into this ringscale" + fix);
}

} // namespace

bool cuda_compiled() {
    return false;
}

int gpu_count() {
    return 0;
}

void bind_gpu(int, int) {
    not_compiled("--device cuda");
}

std::string gpu_peer_topology() {
    return "";
}

gpu_sample sample_gpu(const std::string&) {
    gpu_sample s;
    s.why = "the CUDA backend is not compiled into this ringscale";
    return s;
}

gpu_info current_gpu_info() {
    not_compiled("GPU information");
}

std::uint64_t gpu_free_bytes() {
    not_compiled("device memory");
}

attn_path resolve_attention_path(int) {
    not_compiled("attention path");
}

namespace cuda {

std::unique_ptr<executor> make_executor() {
    not_compiled("--device cuda", " (rebuild where nvcc is found); use --device cpu");
}

// Every kernel of the list: its parameters keep the names the list gives them, none is read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define RINGSCALE_KERNEL(ret, name, params, args)                                                  \
    ret name params {                                                                              \
        not_compiled(#name);                                                                       \
    }
#include "kernels/kernels.inc"
#undef RINGSCALE_KERNEL
#pragma GCC diagnostic pop

} // namespace cuda

} // namespace ringscale::kernels
