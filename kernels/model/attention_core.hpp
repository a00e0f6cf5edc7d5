// The training step's attention: the interface the transformer computes attention through
// (single-rank here; the context-parallel schemes in jobs/schemes, through jobs/train_attention),
// and the single-rank core on any executor.
#pragma once

#include "kernels/kernels.hpp"
#include "src/base/clock.hpp"

#include <cstdint>
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

  private:
    executor& m_exec;
    dev_positions m_pos;
    elem m_elem;
    dev_buffer<unsigned char> m_q, m_kv, m_do;
    dev_buffer<float> m_delta;
};

} // namespace ringscale::kernels::model
