// The training step's operations on one compute device: what kernels/transformer needs to run
// a forward and backward and what the data-parallel strategies need for AdamW, chosen at run
// time from the device the way make_device chooses a device. The CPU backend delegates to the
// CPU kernels (kernels/embedding, rmsnorm, linear, gelu, cross_entropy, adamw) and computes
// exactly what they compute; the CUDA backend runs kernels/cuda on the device's compute stream
// (cuBLAS for the GEMMs). Every pointer is the device's memory (host memory on the CPU);
// overwrite/accumulate contracts are those of the CPU kernels.
//
// Precision: fp32 everywhere (parameters, gradients, AdamW moments, activations), except that
// on CUDA the attention kernel reads Q, K, V and dO rounded to bf16 (O, LSE and its gradients
// stay fp32), and that GEMMs may use TF32 tensor cores when asked for (allow_tf32).
#pragma once

#include "kernels/adamw.hpp"
#include "kernels/device.hpp"
#include "kernels/linear.hpp"
#include "kernels/op_profile.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::kernels {

class attention_core;

/// The tokens one rank holds: `batch` sequences of `rows` tokens.
struct batch_shape {
    std::int64_t batch = 1;
    std::int64_t rows = 0;
    std::int64_t tokens() const { return batch * rows; }
};

class train_ops {
  public:
    virtual ~train_ops() = default;
    /// The device every pointer lives on and every operation runs on.
    virtual device& dev() = 0;
    /// One line naming the arithmetic, recorded with a case (e.g. "fp32; attention bf16").
    virtual std::string precision() const = 0;

    /// As kernels::embedding_fwd (OVERWRITES out) and embedding_bwd (ACCUMULATES dtable).
    virtual void embedding_fwd(std::size_t tokens, std::size_t vocab, std::size_t dim,
                               const float* table, const std::int32_t* ids, float* out) = 0;
    virtual void embedding_bwd(std::size_t tokens, std::size_t vocab, std::size_t dim,
                               const std::int32_t* ids, const float* dout, float* dtable) = 0;
    /// As kernels::rmsnorm_fwd / rmsnorm_bwd.
    virtual void rmsnorm_fwd(std::size_t rows, std::size_t dim, float eps, const float* x,
                             const float* gamma, float* y, float* inv_rms) = 0;
    virtual void rmsnorm_bwd(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                             const float* inv_rms, const float* dy, float* dx, float* dgamma) = 0;
    /// As kernels::linear_fwd / linear_bwd (y = x·Wᵀ + b; dx overwritten, dW/db accumulated).
    virtual void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b,
                            float* y) = 0;
    virtual void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy,
                            float* dx, float* dw, float* db) = 0;
    /// As kernels::gelu_fwd / gelu_bwd.
    virtual void gelu_fwd(std::size_t n, const float* x, float* y) = 0;
    virtual void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx) = 0;
    /// out = a + b elementwise (out may alias a or b).
    virtual void add(std::size_t n, const float* a, const float* b, float* out) = 0;
    /// Token-major [batch, rows, cols] columns [col0, col0 + heads*d) -> BHSD (to_bhsd) and back.
    virtual void to_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
                         std::int64_t cols, std::int64_t col0, float* dst) = 0;
    virtual void from_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d,
                           const float* src, std::int64_t cols, std::int64_t col0, float* dst) = 0;
    /// As kernels::cross_entropy_fwd: the loss in nats (on CUDA this waits for the stream).
    virtual double cross_entropy_fwd(std::size_t tokens, std::size_t vocab,
                                     std::size_t total_tokens, const float* logits,
                                     const std::int32_t* targets) = 0;
    /// As kernels::cross_entropy_bwd with dloss = 1 (dlogits may alias logits).
    virtual void cross_entropy_bwd(std::size_t tokens, std::size_t vocab, std::size_t total_tokens,
                                   const float* logits, const std::int32_t* targets,
                                   float* dlogits) = 0;
    /// As kernels::adamw_step.
    virtual void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                            const float* grad, float* m, float* v) = 0;
    /// Single-rank causal attention over rows at global positions `positions` (the same for
    /// every sequence), on this device.
    virtual std::unique_ptr<attention_core>
    local_attention(std::vector<std::int64_t> positions) = 0;

    /// Where the model and the optimizer time their operations (train_step --profile on);
    /// null (the default): nothing is timed. Not owned. Host clock: CPU backend only.
    void set_profile(op_profile* p) { m_profile = p; }
    op_profile* profile() const { return m_profile; }

  private:
    op_profile* m_profile = nullptr;
};

/// The CPU backend on `dev` (a CPU device, which must outlive it).
std::unique_ptr<train_ops> make_cpu_train_ops(device& dev);

/// A process-wide CPU backend on a CPU device of its own (tests and the CPU reference).
train_ops& default_cpu_train_ops();

/// The backend for `dev`: CPU for "cpu", CUDA for "cuda" (GEMMs may use TF32 with
/// `allow_tf32`; config_error when asked for on the CPU). not_compiled_error for cuda in a
/// binary built without it. `dev` must outlive the backend.
std::unique_ptr<train_ops> make_train_ops(device& dev, bool allow_tf32);

/// The CUDA backend (kernels/cuda/train_ops_cuda.cpp, or a not-compiled stub).
std::unique_ptr<train_ops> make_cuda_train_ops(device& dev, bool allow_tf32);

} // namespace ringscale::kernels
