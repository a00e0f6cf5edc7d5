// What the training step computes with: an executor, the arithmetic of its GEMMs, the loss
// kernel's scratch and where operations are timed (train_step --profile on). Not
// polymorphic: every operation is a kernel of kernels/kernels.hpp, chosen by the executor's
// kind. One per case; the transformer, the single-rank reference and the data-parallel
// strategies share it.
//
// Precision: fp32 everywhere (parameters, gradients, AdamW moments, activations), except that
// on CUDA the attention kernels read Q, K, V and dO rounded to bf16 (O, LSE and their
// gradients stay fp32), that GEMMs may use TF32 tensor cores when asked for, and that with
// --dtype (precision_state) the GEMM operands are rounded: on the host before fp32 GEMMs on
// the CPU, cast on the device for cuBLASLt's bf16, fp16 or fp8 GEMMs on a GPU.
#pragma once

#include "kernels/kernels.hpp"
#include "kernels/model/mixed_precision.hpp"
#include "kernels/op_profile.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ringscale::kernels::model {

/// The dtype a training step's GEMMs multiply in on `device`: the --dtype on a GPU (bf16,
/// fp16, fp8: cuBLASLt), else "tf32" with TF32 tensor cores, else "fp32" (the CPU emulates
/// --dtype by rounding operands it multiplies in fp32).
std::string gemm_dtype_of(device_kind device, gemm_math math, train_dtype dtype);

/// A replacement for the CPU GEMMs of every training context, for tests that plant a defect in
/// them (the test build's planted GEMM defect, tests/support; no program installs one). Each
/// call gets the operands as the dtype rounded them; returning false leaves the GEMM to the
/// context's own kernel. The contract of linear_fwd / linear_bwd (dx overwritten, dW and db
/// accumulated).
struct cpu_gemm_override {
    virtual ~cpu_gemm_override() = default;
    virtual bool fwd(train_dtype t, const linear_shape& s, const float* x, const float* w,
                     const float* b, float* y) = 0;
    virtual bool bwd(train_dtype t, const linear_shape& s, const float* x, const float* w,
                     const float* dy, float* dx, float* dw, float* db) = 0;
};

/// Install `o` (not owned; null: none) for every training context of the process, on the CPU
/// executor. Not thread safe: set it between cases, on every rank alike.
void set_cpu_gemm_override(cpu_gemm_override* o);

class train_context {
  public:
    /// GEMMs in TF32 when `allow_tf32` (config_error on the CPU). `exec` must outlive the
    /// context. Not collective.
    train_context(executor& exec, bool allow_tf32);
    train_context(const train_context&) = delete;
    train_context& operator=(const train_context&) = delete;

    /// The executor every buffer lives on and every operation runs on.
    executor& exec() const { return m_exec; }
    /// The arithmetic of the dense layers' GEMMs.
    gemm_math math() const { return m_math; }
    /// One line naming the arithmetic, recorded with a case (e.g. "fp32 (CPU kernels)").
    std::string precision() const;
    /// The dtype the dense layers' GEMMs multiply in, for MFU against that dtype's peak
    /// (gemm_dtype_of).
    std::string gemm_dtype() const {
        return gemm_dtype_of(m_exec.kind(), m_math, m_mixed.config().dtype);
    }
    /// One line, recorded with a case: which tensors are stored in which dtype, what the GEMMs
    /// and the attention read, and the dtype gradients are reduced in.
    std::string storage() const;
    /// The mixed-precision emulation (train_step --dtype; fp32 by default): what GEMM and
    /// attention inputs are rounded to. Set before the first step; on a GPU the GEMMs run in
    /// the dtype (kernels/lowp_gemm) and keep their scales and overflow counts here.
    mixed_precision& precision_state() { return m_mixed; }
    const mixed_precision& precision_state() const { return m_mixed; }
    /// y = x·Wᵀ + b as linear_fwd, x and W first rounded as GEMM `site` reads them.
    void gemm_fwd(int site, const linear_shape& s, const float* x, const float* w, const float* b,
                  float* y);
    /// linear_bwd with x, W and dy rounded as GEMM `site`'s backward reads them; with the
    /// floor's reorder on (mixed_precision::reorders), x's and dy's rows taken in its row order
    /// first (dW sums over the tokens in that order) and dx's put back, on any executor.
    void gemm_bwd(int site, const linear_shape& s, const float* x, const float* w, const float* dy,
                  float* dx, float* dw, float* db);
    /// gemm_fwd with y written as attention heads (linear_fwd_heads): group g of y's columns
    /// BHSD at dst[g]; `scratch` [tokens, out] where the backend writes y first.
    void gemm_fwd_heads(int site, const linear_shape& s, const float* x, const float* w,
                        const float* b, const batch_shape& bs, std::int64_t heads, std::int64_t d,
                        float* const* dst, float* scratch);
    /// gemm_bwd with dx written as attention heads (linear_bwd_heads), BHSD at dx; `scratch`
    /// [tokens, in] where the backend writes dx first, and where the floor's reordered rows
    /// (mixed_precision::reorders) are put back before the move.
    void gemm_bwd_heads(int site, const linear_shape& s, const float* x, const float* w,
                        const float* dy, const batch_shape& bs, std::int64_t heads, std::int64_t d,
                        float* dx, float* dw, float* db, float* scratch);
    /// Round `n` attention inputs in place as --dtype says (mixed_precision::round_attention)
    /// on the CPU; a GPU's attention kernels read Q, K, V, dO in bf16 whatever the dtype.
    void round_attention(float* v, std::size_t n) const;
    /// Scratch of the loss kernel.
    loss_scratch& scratch() { return m_scratch; }

    /// Where the model and the optimizer time their operations (host clock; on a GPU, CUDA
    /// events: op_profile::set_device); null (the default): nothing is timed. Not owned.
    void set_profile(op_profile* p) { m_profile = p; }
    op_profile* profile() const { return m_profile; }

    /// Called before every dense layer's GEMMs, the step's longest operations (tens of ms on a
    /// CPU core): a data-parallel scheme moves its non-blocking collectives there, since MPI
    /// progresses them only inside MPI calls. Empty (the default): nothing is called. `owner`
    /// clears it with clear_progress (a scheme replaced by another leaves the new one's).
    void set_progress(const void* owner, std::function<void()> f) {
        m_progress_owner = owner;
        m_progress = std::move(f);
    }
    void clear_progress(const void* owner) {
        if (m_progress_owner == owner)
            set_progress(nullptr, nullptr);
    }
    bool has_progress() const { return static_cast<bool>(m_progress); }

  private:
    /// Whether the GEMMs run in the dtype on the device (a GPU with --dtype other than fp32).
    bool device_lowp() const;
    /// GEMM `site`'s operand types and scales for the device (kernels/lowp_gemm).
    lowp_gemm lowp_for(int site);
    /// Whether a cpu_gemm_override is installed and this context runs on the CPU.
    bool overridden() const;
    /// linear_fwd / linear_bwd on the executor, or the installed override's.
    void plain_fwd(const linear_shape& s, const float* x, const float* w, const float* b, float* y);
    void plain_bwd(const linear_shape& s, const float* x, const float* w, const float* dy,
                   float* dx, float* dw, float* db);
    /// gemm_bwd past the floor's row order: in the dtype on the device (linear_bwd_lowp), else
    /// with the operands rounded as the dtype reads them (plain_bwd).
    void dtype_bwd(int site, const linear_shape& s, const float* x, const float* w, const float* dy,
                   float* dx, float* dw, float* db);

    executor& m_exec;
    gemm_math m_math;
    loss_scratch m_scratch;
    mixed_precision m_mixed;
    op_profile* m_profile = nullptr;
    std::function<void()> m_progress;
    const void* m_progress_owner = nullptr;
    // gemm_bwd's reordered rows (the floor's runs) on the executor, and their order.
    dev_buffer<float> m_rows_x, m_rows_dy, m_rows_dx;
    dev_buffer<std::int64_t> m_rows_index;
    std::vector<std::int64_t> m_rows_order;
};

/// One AdamW update (kernels::adamw_step) on ctx's executor, timed as the optimizer in ctx's
/// profile when one is set.
void optimizer_step(train_context& ctx, const adamw_params& hp, std::int64_t step, std::size_t n,
                    float* param, const float* grad, float* m, float* v);

/// A process-wide context on a CPU executor of its own (tests and the CPU reference).
train_context& default_cpu_context();

} // namespace ringscale::kernels::model
