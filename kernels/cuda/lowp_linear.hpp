// A linear layer's GEMMs in bf16, fp16 or fp8 on the CUDA executor (kernels/lowp_gemm; the
// kernels linear_fwd_lowp and linear_bwd_lowp): each fp32 operand is cast on the device into
// the type and form kernels/cuda/lowp_plan gives, and cuBLASLt multiplies with fp32
// accumulation into the fp32 output.
//  - bf16, fp16: one cast per operand; fp16's dy is cast as dy_scale · dy and the products
//    divided by dy_scale (alpha), the values that became inf counted (lowp_gemm::overflowed)
//    once per tensor and call: x and W forward, dy, x and W (with dx) backward.
//  - fp8: a first pass takes the operand's amax (waits for the stream), the host bookkeeping
//    gives its scale s (lowp_gemm::fp8_scale: current or delayed, as the CPU emulation), the
//    operand is quantised with s (transposed where the plan reads a copy), and 1/s reaches
//    cuBLASLt as its dequantisation operand.
//  - The bias gradient sums the rounded dy, as the CPU emulation's.
// Free of CUDA types. Owned by the executor; not thread safe.
#pragma once

#include "kernels/cuda/cublaslt_gemm.hpp"
#include "kernels/cuda/lowp_plan.hpp"
#include "kernels/dev_buffer.hpp"

namespace ringscale::kernels::cuda {

class lowp_linear {
  public:
    /// GEMMs on `exec`'s compute stream; `exec` outlives this.
    explicit lowp_linear(executor& exec);

    /// y = x·Wᵀ + b (OVERWRITES y; b may be null).
    void forward(const lowp_gemm& g, const linear_shape& s, const float* x, const float* w,
                 const float* b, float* y);
    /// dx = dy·W OVERWRITTEN (may be null), dW += dyᵀ·x, db += Σ rounded dy (may be null).
    void backward(const lowp_gemm& g, const linear_shape& s, const float* x, const float* w,
                  const float* dy, float* dx, float* dw, float* db);

  private:
    /// An operand cast as `u` says into operand buffer `slot` (0: A, 1: B); its scale s (1 but
    /// for fp8 and fp16's dy) in *scale, and 1/s uploaded to the slot's device scalar for fp8.
    /// fp16's overflows reported when `count`.
    const void* prepare(const lowp_gemm& g, const lowp_use& u, const float* src, int slot,
                        float* scale, bool count);
    /// The scale of `u`'s tensor: fp8 from its amax (measured here, through operand buffer
    /// `slot`), fp16's dy_scale for dy, else 1.
    float scale_of(const lowp_gemm& g, const lowp_use& u, const float* src, int slot);
    /// Plan `p`'s GEMM of src_a, src_b into d; dy's scale in *dy_scale (when not null); A's
    /// fp16 overflows reported when `count_a` (B's always).
    void run(const lowp_gemm& g, const lowp_plan& p, const float* src_a, const float* src_b,
             float* d, float* dy_scale = nullptr, bool count_a = true);

    executor& m_exec;
    cublaslt_gemm m_lt;
    dev_buffer<unsigned char> m_operand[2];
    dev_buffer<float> m_scalars;                ///< [0] amax, [1] junk amax, [2 + slot] 1/s
    dev_buffer<unsigned long long> m_overflows; ///< [1]
    dev_buffer<float> m_rounded;                ///< the bias gradient's rounded dy
};

} // namespace ringscale::kernels::cuda
