// The ring attention algorithm on any communicator and device, for any caller's tensors:
// the ring scheme (schemes/cp_attention.hpp) and the ring part of the hybrid. K/V blocks rotate in
// P-1 steps and merge by log-sum-exp; the backward carries dK/dV partial sums around the ring and
// home to their owner. With overlap, the next block's exchange runs while the current block is
// computed: on the CPU through MPI progress between kernel pieces, on CUDA on the communicator's
// own stream (NCCL) or in MPI while the kernel runs (staged), the compute stream waiting only when
// a block has not arrived yet (that wait is the exposed communication).
#pragma once

#include "comm/communicator.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "kernels/dev_buffer.hpp"
#include "src/base/clock.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::jobs::schemes {

/// What a ring pass needs to know. `shape` is the local problem (q_len = k_len = rows per
/// ring rank); `positions[r]` are ring rank r's global token positions on `dev`.
struct ring_spec {
    comm::communicator* comm = nullptr;
    kernels::executor* dev = nullptr;
    kernels::elem type = kernels::elem::f32; ///< Q, K, V, dO element type
    kernels::attention_shape shape;
    const std::vector<kernels::dev_positions>* positions = nullptr;
    bool overlap = true;         ///< post the next exchange before computing the current block
    bool merge_in_dtype = false; ///< round O to `type` after each block (cp_config)
    int steps = 0;               ///< ring steps a pass runs (ring_steps_needed); 0 = all P
};

/// How many ring steps a pass must run for ring ranks holding `positions` ([P][rows], sorted):
/// 1 + the largest step s at which some rank's queries see a key of the block it holds then
/// (rank r - s's); later steps and their exchanges are skipped (a causal sliding window
/// within a shard needs 2: the own block and the previous rank's). P without a mask beyond
/// causal. Pure: every rank computes the same.
int ring_steps_needed(const kernels::attention_shape& shape,
                      const std::vector<std::vector<std::int64_t>>& positions);

/// Scratch reused across iterations: two K/V ring buffers, dK/dV partial sums.
struct ring_buffers {
    std::vector<char> visible; ///< [P]: whether our queries see a key of rank r's block
    std::vector<double> pairs; ///< --trace: [P] (query, key) pairs visible in rank r's block
    kernels::dev_buffer<unsigned char> kv[2];
    kernels::dev_buffer<float> dkv_local, dkv_send;
    /// The compute that last read kv[0] or kv[1]: a forward's last steps read them while the
    /// backward that follows already receives into them (a race on CUDA without it).
    kernels::mark last_read;
    /// Size for `spec` (backward buffers only when `backward`). Not collective.
    void reserve(const ring_spec& spec, bool backward);
};

/// Elements of one rank's K (or V) block and of its Q (or O) block.
std::size_t ring_kv_elems(const ring_spec& spec);
std::size_t ring_q_elems(const ring_spec& spec);

/// Collective over spec.comm: O [B,H,rows,D] and LSE [B,H,rows] (fp32) of the local queries
/// against every rank's K/V. `kv` is this rank's [K | V] (2 x ring_kv_elems of spec.type),
/// unchanged; q is spec.type. All pointers in spec.dev's memory. The first send of `kv` waits
/// for no mark: the caller orders spec.comm after the compute that wrote it (order_comm_after),
/// as the hybrid does for the K/V its Ulysses exchange has just unpacked.
void ring_forward(const ring_spec& spec, const void* q, const void* kv, float* o, float* lse,
                  ring_buffers& bufs, phase_timer& timer);

/// Collective over spec.comm: dQ (overwritten) and this rank's [dK | dV] (overwritten,
/// 2 x ring_kv_elems, fp32) from the forward's O and LSE and the incoming dO (spec.type).
/// `delta` [B,H,rows] = rowsum(dO * O) is computed there from `o`; with `o` null it holds it
/// already. `kv` is sent first as in ring_forward, ordered by the caller the same way.
void ring_backward(const ring_spec& spec, const void* q, const void* kv, const float* o,
                   const void* d_o, const float* lse, float* delta, float* dq, float* dkv,
                   ring_buffers& bufs, phase_timer& timer);

/// Bytes this rank sends per pass with n = spec.steps (0: P): forward (n-1) K/V blocks;
/// backward (n-1) K/V blocks and n dK/dV partial sums (fp32; none when n = 1).
double ring_bytes_sent(const ring_spec& spec, bool backward);

} // namespace ringscale::jobs::schemes
