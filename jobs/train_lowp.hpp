// train_step --dtype bf16|fp16|fp8 on a GPU: where the GPU and cuBLASLt run the case's GEMMs,
// and the device memory their buffers take (kernels/cuda/lowp_linear), for the plan.
#pragma once

#include "jobs/train_problem.hpp"

#include <memory>
#include <string>

namespace ringscale::comm {
class communicator;
}
namespace ringscale::kernels::model {
class mixed_precision;
}

namespace ringscale::jobs {

/// "" when the GPU runs the case's --dtype GEMMs (fp32: always), else one line: bf16 and fp16
/// from compute capability 8.0, fp8 on Hopper (9.x) only, and fp8 with every GEMM in
/// cuBLASLt's fp8 form (hidden, K/V width, FFN width, vocab and the rows a rank holds,
/// seq_len / cp, multiples of 16). A compute capability of 0.0 (not known) is not checked.
std::string lowp_gpu_refusal(const train_problem& pr, int cc_major, int cc_minor);

/// fp8's current recipe at cp > 1: each GEMM activation's and output gradient's amax becomes
/// the max over the replica's cp group (a host-memory split of `control` by grid position
/// `at`), so the cp shards of one tensor share its scale, as TransformerEngine reduces amaxes
/// over a sequence-parallel group, and the single-rank reference (a replica's sequences per
/// call) quantises as the run does. Collective over `control` (the split) when it applies;
/// else null and `mp` untouched.
std::unique_ptr<comm::communicator> share_current_amax(const train_problem& pr,
                                                       comm::communicator& control, int at,
                                                       kernels::model::mixed_precision& mp);

/// Device bytes of the low-precision GEMMs' buffers (kernels/cuda/lowp_linear) for a model
/// whose GEMMs see `tokens` rows, in dtype `t` (0 for fp32): the largest A operand (x or dy)
/// and the largest B operand (W, or x for dW) in the dtype's bytes, the rounded dy the bias
/// gradient sums (fp32), and cuBLASLt's 32 MiB workspace.
double lowp_scratch_bytes(const kernels::model::model_config& m, kernels::model::train_dtype t,
                          double tokens);

} // namespace ringscale::jobs
