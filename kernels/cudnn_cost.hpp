// What building cuDNN's graphs has cost this thread so far: a set-up cost of --attn-kernel
// cudnn (a graph is built on a shape's first call, in the warm-up, outside the timed
// iterations), recorded with each attention case. Zeros without cuDNN.
#pragma once

#include <cstdint>

namespace ringscale::kernels {

struct cudnn_graph_cost {
    std::uint64_t builds = 0; ///< graphs built
    double seconds = 0;       ///< host seconds spent building them
};

/// This thread's graph builds so far (kernels/cuda/cudnn_info.cpp, or the not-compiled hooks:
/// zeros). Never throws; creates nothing.
cudnn_graph_cost cudnn_graph_cost_so_far();

} // namespace ringscale::kernels
