// The training step's attention: the interface the transformer computes attention through
// (single-rank here; the context-parallel schemes in jobs/schemes, through jobs/train_attention),
// and the single-rank core on any executor.
#pragma once

#include "kernels/kernels.hpp"
#include "src/base/clock.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace ringscale::kernels::model {

/// Causal self-attention over a rank's rows. Q, O, dO, dQ are [B, H, rows, D]; `kv` and `dkv`
/// hold this rank's K then V, each [B, H, rows, D]. Implementations may be collective.
class attention_core {
  public:
    virtual ~attention_core() = default;
    /// O and LSE [B, H, rows] of the local queries against every key the core sees.
    virtual void forward(const attention_shape& s, const float* q, const float* kv, float* o,
                         float* lse, phase_timer& timer) = 0;
    /// dQ and this rank's [dK | dV], both OVERWRITTEN.
    virtual void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                          const float* d_o, const float* lse, float* dq, float* dkv,
                          phase_timer& timer) = 0;
};

/// The type the training step's attention kernels read Q, K, V and dO in on `exec`: fp32 where
/// they take it (the CPU), else bf16.
elem attention_input_type(executor& exec);

/// Asynchronous on exec's compute stream: `n` fp32 values of `src` as type `e` for the attention
/// kernels: `src` itself for f32, else rounded into `buf` (grown when too small).
const void* attention_input(executor& exec, elem e, const float* src, std::size_t n,
                            dev_buffer<unsigned char>& buf);

/// Single-rank causal attention on `exec`: the rank's rows (global positions `positions`, the
/// same for every sequence) attend to themselves as one K/V block, through the attention
/// kernels. Q, K, V and dO go in as the type the executor's kernels take: fp32 as they are on
/// the CPU, rounded to bf16 in scratch buffers on CUDA; O, LSE and every gradient stay fp32.
/// Not collective.
class local_attention_core final : public attention_core {
  public:
    local_attention_core(executor& exec, std::vector<std::int64_t> positions);
    void forward(const attention_shape& s, const float* q, const float* kv, float* o, float* lse,
                 phase_timer& timer) override;
    void backward(const attention_shape& s, const float* q, const float* kv, const float* o,
                  const float* d_o, const float* lse, float* dq, float* dkv,
                  phase_timer& timer) override;
    /// train_step --numerics' floor runs (on any executor): with a seed other than 0, every call
    /// splits the keys (and in the backward the queries too) into 2 to 4 contiguous blocks at
    /// seeded random points and runs them in a seeded random order, merged by log-sum-exp (O,
    /// LSE) and summed (dQ over key blocks, dK and dV over query blocks) as a context-parallel
    /// scheme merges its blocks: the attention's reductions really reordered. 0 (the
    /// default): one block, as before.
    void reorder_keys(std::uint64_t seed) { m_reorder_seed = seed; }

  private:
    /// The key blocks [begin, end) of this call, in the order they are merged.
    std::vector<std::pair<std::int64_t, std::int64_t>> key_blocks(std::int64_t rows);
    bool reordered() const;
    void forward_blocks(const attention_shape& s, const unsigned char* q, const unsigned char* kv,
                        float* o, float* lse);
    void backward_blocks(const attention_shape& s, const float* o, const unsigned char* q,
                         const unsigned char* kv, const void* d_o, const float* lse, float* dq,
                         float* dkv);

    executor& m_exec;
    dev_positions m_pos;
    elem m_elem;
    dev_buffer<unsigned char> m_q, m_kv, m_do;
    dev_buffer<float> m_delta;
    std::uint64_t m_reorder_seed = 0, m_reorder_calls = 0;
    // A block's rows (the floor's reorders), on the executor: Q, dO, K, V of the inputs' type,
    // the rest fp32.
    dev_buffer<unsigned char> m_block_q, m_block_do, m_block_k, m_block_v;
    dev_buffer<float> m_block_o, m_block_lse, m_block_delta, m_block_dq, m_block_dk, m_block_dv;
};

} // namespace ringscale::kernels::model
