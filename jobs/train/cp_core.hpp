// Context-parallel attention cores for the training step: the cp ranks of one data-parallel
// replica each hold seq_len/cp tokens of every sequence (zigzag layout: chunks r and 2cp-1-r,
// so every rank has the same amount of causal work) and attend across the group.
//   ring:      jobs/ring_core's K/V ring (overlapped), dK/dV partial sums sent home.
//   allgather: K/V of the whole sequence all-gathered, local queries attend to each rank's
//              block in turn, dK/dV of every block reduce-scattered back to its owner.
//   ulysses:   all-to-all to head sharding (heads/cp heads, the whole sequence), local
//              attention, all-to-all back (jobs/train/cp_ulysses.cpp).
#pragma once

#include "comm/communicator.hpp"
#include "jobs/schemes/ring.hpp"
#include "kernels/model/transformer.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs::train {

/// Global positions of every cp rank's rows under the zigzag layout ([cp][seq_len/cp]).
std::vector<std::vector<std::int64_t>> cp_positions(std::int64_t seq_len, int cp);

/// The attention core for `variant` (ring | allgather | ulysses) over the cp communicator
/// `cp`, or the single-rank core on `ctx`'s executor when cp has one rank. Ulysses needs heads
/// divisible by cp (train_problem checks it). Only the ring runs on a device other than the CPU
/// (bf16 Q, K, V, dO there, as the single-rank core): config_error for the others with cp > 1.
std::unique_ptr<kernels::model::attention_core> make_cp_core(const std::string& variant,
                                                             comm::communicator* cp,
                                                             kernels::model::train_context& ctx,
                                                             std::int64_t seq_len);

/// The Ulysses core (jobs/train/cp_ulysses.cpp).
std::unique_ptr<kernels::model::attention_core>
make_ulysses_train_core(comm::communicator& cp, kernels::executor& dev, std::int64_t seq_len);

/// The one-line refusal of a cp variant other than ring on a device other than the CPU.
std::string cp_device_refusal(const std::string& variant, device_kind device);

/// Preflight: floats of the core's own buffers for a rank's `tokens` rows of width `hidden`.
double cp_core_floats(const std::string& variant, int cp, double tokens, double hidden);

} // namespace ringscale::jobs::train
