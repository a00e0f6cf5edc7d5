// Whether cuDNN attention is compiled in, and the versions /meta records (kernels/
// attention_path.hpp): the cuDNN library loaded at run time and the frontend compiled in;
// the graphs' build cost so far (kernels/cudnn_cost.hpp).
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_cost.hpp"
#include "kernels/cudnn_sdpa.hpp"
#include "kernels/cudnn_support.hpp"

#include <cudnn.h>
#include <cudnn_frontend_version.h>

#include <fmt/format.h>

namespace ringscale::kernels {

bool cudnn_compiled() {
    return true;
}

std::string cudnn_runtime_version() {
    return cudnn_version_text(static_cast<int>(cudnnGetVersion()));
}

std::string cudnn_frontend_version() {
    return fmt::format("{}.{}.{}", CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION,
                       CUDNN_FRONTEND_PATCH_VERSION);
}

cudnn_graph_cost cudnn_graph_cost_so_far() {
    const cudnn_cache_stats s = cuda::cudnn_graph_cache_stats();
    return {s.builds, s.build_s};
}

} // namespace ringscale::kernels
