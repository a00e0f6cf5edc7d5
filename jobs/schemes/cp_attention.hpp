// Context-parallel attention, each scheme written once on the executor (kernels/executor.hpp)
// and used alike by the attention jobs (ring_attention, context_parallel) and the training step
// (train_step --cp-variant):
//   ring       K/V blocks rotate around the ranks, merged by log-sum-exp (schemes/ring.hpp);
//   allgather  K/V all-gathered (Llama 3), dK/dV partial sums reduce-scattered home in a ring
//              pipelined with the backward's compute (schemes/allgather.cpp);
//   ulysses    one all-to-all to head sharding over every rank, local attention, one back
//              (DeepSpeed-Ulysses; schemes/ulysses.cpp, schemes/ulysses_exchange.hpp);
//   hybrid     Ulysses inside groups of u ranks and the ring across the P/u groups (USP).
// Every scheme starts from sequence-sharded Q, K|V (and dO) of the configured element type and
// leaves O, LSE (and dQ, dK|dV) sequence-sharded in fp32, in the caller's buffers on the
// executor. Before a call, the caller orders it after the compute that wrote those inputs
// (jobs/schemes/device_exchange.hpp, order_comm_after); the schemes order their own
// communication after their own compute.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/kernels.hpp"
#include "src/base/case_record.hpp"
#include "src/base/clock.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs::schemes {

/// Which scheme, and how a caller runs it.
struct cp_config {
    std::string variant = "ring"; ///< ring | allgather | ulysses | hybrid
    /// hybrid: ranks per Ulysses group u (divides P, the heads and the kv-heads); ulysses: P.
    int ulysses_degree = 1;
    /// The rank at each position (comm::group_order); Ulysses groups are consecutive
    /// positions. Empty: rank order.
    std::vector<int> order;
    kernels::elem type = kernels::elem::f32; ///< Q, K, V, dO (a type the kernels take)
    bool overlap = true; ///< the ring: post the next block's exchange before computing this one
    /// The backward follows the forward of the same inputs (the attention jobs' iteration), so
    /// it may use what the forward left: the gathered K/V, the head-sharded tensors. Off (the
    /// training step, whose layers run every forward before the backwards): each backward
    /// exchanges again what it needs, and the forward always returns the LSE.
    bool keep_forward = true;
};

class cp_attention {
  public:
    virtual ~cp_attention() = default;

    /// Size the scheme's buffers for the local shape `s` (its mask's arrays where the kernels
    /// read them; the sizes the scheme was made for) and whether backwards run. Allocates only
    /// the first time (or when they grow). Not collective.
    virtual void prepare(const kernels::attention_shape& s, bool backward) = 0;

    /// Collective: O [B,H,rows,D] and LSE [B,H,rows] (fp32) of this rank's queries against
    /// every key; q and this rank's kv [K | V] (unchanged) are of the configured type. `lse` may
    /// be null with keep_forward: the scheme then keeps the LSE its backward needs itself.
    virtual void forward(const void* q, const void* kv, float* o, float* lse,
                         phase_timer& timer) = 0;

    /// Collective: dQ [B,H,rows,D] and this rank's [dK | dV] (fp32, OVERWRITTEN) from the
    /// forward's O and LSE and the incoming dO (configured type). With keep_forward it follows
    /// forward() of the same q, kv (and takes the same `lse`, null or not).
    virtual void backward(const void* q, const void* kv, const float* o, const void* d_o,
                          const float* lse, float* dq, float* dkv, phase_timer& timer) = 0;

    /// Bytes this rank sends per forward, or per forward and backward.
    virtual double bytes_sent(bool backward) const = 0;

    /// The rows each share of the work covers (its visible pairs measure the imbalance): the
    /// ranks' own; for Ulysses and the hybrid each group's, split by heads among its members.
    virtual std::vector<std::vector<std::int64_t>> work_positions() const = 0;

    /// The scheme's own case attributes (Ulysses and ring degrees, gathered K/V bytes).
    virtual void describe(results::attr_map& a) const = 0;
};

/// The scheme `c.variant` over `comm` (every rank of the scheme) on `dev`. `local` is one
/// rank's problem (q_len = k_len = its rows; the mask's host arrays suffice here) and
/// `positions[r]` the global positions of rank r's rows, sorted. Collective over `comm` (the
/// hybrid splits it into groups and rings) but allocates nothing until prepare(). config_error
/// for an unknown variant.
std::unique_ptr<cp_attention> make_cp_attention(const cp_config& c, comm::communicator& comm,
                                                kernels::executor& dev,
                                                const kernels::attention_shape& local,
                                                std::vector<std::vector<std::int64_t>> positions);

/// The schemes (schemes/allgather.cpp, schemes/ulysses.cpp); make_cp_attention chooses.
std::unique_ptr<cp_attention> make_allgather_attention(const cp_config& c, comm::communicator& comm,
                                                       kernels::executor& dev,
                                                       const kernels::attention_shape& local,
                                                       std::vector<std::vector<std::int64_t>> pos);
std::unique_ptr<cp_attention> make_ulysses_attention(const cp_config& c, comm::communicator& comm,
                                                     kernels::executor& dev,
                                                     const kernels::attention_shape& local,
                                                     std::vector<std::vector<std::int64_t>> pos);

} // namespace ringscale::jobs::schemes
