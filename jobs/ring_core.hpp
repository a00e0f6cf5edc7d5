// The ring attention algorithm on any communicator, for any caller's tensors: used by the
// ring_attention job, the ring part of context parallelism's hybrid, and the training step
// with --cp-variant ring. K/V blocks rotate in P-1 steps and merge by log-sum-exp; the
// backward carries dK/dV partial sums around the ring and home to their owner.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/attention_cpu.hpp"
#include "src/clock.hpp"
#include "src/memory.hpp"

#include <vector>

namespace ringscale::jobs {

/// What a ring pass needs to know. `shape` is the local problem (q_len = k_len = rows per
/// ring rank); `positions[r]` are the global token positions of ring rank r's rows.
struct ring_spec {
    comm::communicator* comm = nullptr;
    kernels::attention_shape shape;
    const std::vector<std::vector<std::int64_t>>* positions = nullptr;
    bool overlap = true; ///< post the next exchange before computing the current block
};

/// Scratch reused across iterations: two K/V ring buffers, dK/dV partial sums, workspace.
struct ring_buffers {
    host_buffer<float> kv[2], dkv_local, dkv_send;
    kernels::attention_workspace ws;
    /// Size for `spec` (backward buffers only when `backward`). Not collective.
    void reserve(const ring_spec& spec, bool backward);
};

/// Elements of one rank's K (or V) block and of its Q (or O) block.
std::size_t ring_kv_elems(const ring_spec& spec);
std::size_t ring_q_elems(const ring_spec& spec);

/// Collective over spec.comm: O [B,H,rows,D] and LSE [B,H,rows] of the local queries
/// against every rank's K/V. `kv` is this rank's [K | V] (2 x ring_kv_elems), unchanged.
void ring_forward(const ring_spec& spec, const float* q, const float* kv, float* o, float* lse,
                  ring_buffers& bufs, phase_timer& timer);

/// Collective over spec.comm: dQ (overwritten) and this rank's [dK | dV] (overwritten,
/// 2 x ring_kv_elems) from the forward's O and LSE and the incoming dO. `delta` [B,H,rows]
/// is scratch.
void ring_backward(const ring_spec& spec, const float* q, const float* kv, const float* o,
                   const float* d_o, const float* lse, float* delta, float* dq, float* dkv,
                   ring_buffers& bufs, phase_timer& timer);

/// Bytes this rank sends per pass: forward (P-1) K/V blocks; backward (P-1) K/V blocks and P
/// dK/dV partial sums.
double ring_bytes_sent(const ring_spec& spec, bool backward);

} // namespace ringscale::jobs
