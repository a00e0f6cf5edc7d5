// The kernels, declared once (kernels/kernels.inc) as free functions taking the executor they
// run on: attention blocks, row permutations, type conversion and sums, and the training
// step's layers. Each is implemented once per backend folder (kernels/cpu, kernels/cuda) and
// chosen by exec.kind() in kernels/dispatch.cpp; the plain oracles every backend is tested
// against are in kernels/reference. This header also holds the parameter types the kernels
// share.
#pragma once

#include "kernels/adamw.hpp"
#include "kernels/attention_shape.hpp"
#include "kernels/dev_buffer.hpp"
#include "kernels/elem.hpp"
#include "kernels/executor.hpp"
#include "kernels/linear.hpp"
#include "kernels/lowp_gemm.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ringscale::kernels {

/// How the CPU attention kernels run a call: `whole` (every (batch, head, tile) item over the
/// rank's threads at once) or `per_group`, one call per piece of a batch entry's kv-head
/// groups (as many groups as the rank's threads), so a progress function can run between
/// the pieces. CUDA runs every call whole.
enum class attention_split { whole, per_group };

/// Called between pieces of a long CPU kernel so the caller can drive MPI progress.
using progress_fn = std::function<void()>;

/// The tokens one rank holds: `batch` sequences of `rows` tokens.
struct batch_shape {
    std::int64_t batch = 1;
    std::int64_t rows = 0;
    std::int64_t tokens() const { return batch * rows; }
};

/// The arithmetic of fp32 GEMMs: full fp32, or TF32 tensor cores (CUDA only; fp32 storage,
/// ~1e-3 relative error).
enum class gemm_math { fp32, tf32 };

/// Scratch of cross_entropy_fwd on a device (CUDA: per-row losses and their sum), owned by the
/// caller and reused; the CPU leaves it empty.
struct loss_scratch {
    dev_buffer<float> rows;
    dev_buffer<double> total;
};

#define RINGSCALE_KERNEL(ret, name, params, args) ret name params;
#include "kernels/kernels.inc"
#undef RINGSCALE_KERNEL

} // namespace ringscale::kernels
