// The training step's attention across the cp ranks of one data-parallel replica: each holds
// seq_len/cp tokens of every sequence (zigzag layout: chunks r and 2cp-1-r, so every rank has
// the same amount of causal work), and the scheme of --cp-variant (jobs/schemes: ring,
// allgather, ulysses, hybrid) attends across the group on the step's executor. Every layer's
// backward runs after all the forwards, so the schemes run without keep_forward: a backward
// exchanges again what it needs. The model hands fp32 Q, K|V and dO; where the attention
// kernels read bf16 (CUDA) they are rounded first, as in the single-rank core.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/model/attention_core.hpp"
#include "kernels/model/params.hpp"
#include "kernels/model/train_context.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// Global positions of every cp rank's rows under the zigzag layout ([cp][seq_len/cp]).
std::vector<std::vector<std::int64_t>> train_cp_positions(std::int64_t seq_len, int cp);

/// The attention of scheme `variant` (ring | allgather | ulysses | hybrid, the hybrid in groups
/// of `ulysses_degree` cp ranks) over the cp communicator `cp` for one rank's problem `local`
/// (the model's attention shape, its mask included), or the single-rank core on ctx's executor
/// when cp is null or has one rank. Ulysses and the hybrid need the heads divisible by their
/// degree (train_problem checks it). Collective over `cp` (the hybrid splits it).
std::unique_ptr<kernels::model::attention_core>
make_train_attention(const std::string& variant, int ulysses_degree, comm::communicator* cp,
                     kernels::model::train_context& ctx, const kernels::attention_shape& local,
                     std::int64_t seq_len);

/// Preflight: floats of the scheme's own buffers for a rank's `tokens` rows of model `m` (the
/// hybrid in groups of `ulysses_degree`): the ring's and the all-gather's K/V buffers at K/V's
/// width (kv_width(): fewer heads with GQA), Ulysses' at the hidden width.
double train_cp_floats(const std::string& variant, int cp, int ulysses_degree, double tokens,
                       const kernels::model::model_config& m);

} // namespace ringscale::jobs
