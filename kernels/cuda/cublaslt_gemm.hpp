// bf16, fp16 and fp8 GEMMs through cuBLASLt (the mixed-precision training step's GEMMs, as
// cuBLASLt's LtSgemm and LtFp8Matmul samples run them): fp32 accumulation and an fp32
// output, one matmul descriptor per shape (cached, with its layouts and the heuristic's
// algorithm), fp8 scales as explicit device operands. The header names no CUDA type.
#pragma once

#include "kernels/cuda/cublaslt_shape.hpp"

#include <cstddef>
#include <map>
#include <memory>

namespace ringscale::kernels::cuda {

/// One cuBLASLt handle and workspace on the CURRENT device, bound to `stream`. Move-only in
/// spirit (not copyable). Not thread safe.
class cublaslt_gemm {
  public:
    /// `stream`: a cudaStream_t (nullptr: the legacy default stream); `workspace_bytes` of
    /// device workspace for split-K algorithms.
    explicit cublaslt_gemm(void* stream, std::size_t workspace_bytes = std::size_t{32} << 20);
    ~cublaslt_gemm();
    cublaslt_gemm(const cublaslt_gemm&) = delete;
    cublaslt_gemm& operator=(const cublaslt_gemm&) = delete;

    /// D = alpha · a_scale · b_scale · op(A) · op(B) + beta · D (lt_shape's row-major
    /// convention), D fp32, accumulated in fp32. a_scale and b_scale: DEVICE fp32 pointers to
    /// each fp8 operand's dequantisation factor 1/s (required for fp8, null otherwise).
    /// Asynchronous on the stream. config_error for a shape cuBLASLt does not take
    /// (lt_refusal); a cuda error when cuBLASLt finds no algorithm or fails.
    void run(const lt_shape& s, const void* a, const void* b, float* d, float alpha, float beta,
             const float* a_scale = nullptr, const float* b_scale = nullptr);
    /// Matmul descriptors made so far: one per distinct shape run.
    std::size_t descriptors() const { return m_plans.size(); }
    /// The compute and scale types every GEMM uses, as recorded with a case.
    static const char* compute_type() { return "CUBLAS_COMPUTE_32F, scale type fp32"; }

  private:
    struct plan;
    plan& plan_for(const lt_shape& s);

    void* m_handle = nullptr;    // cublasLtHandle_t
    void* m_stream = nullptr;    // cudaStream_t, not owned
    void* m_workspace = nullptr; // device memory
    std::size_t m_workspace_bytes = 0;
    std::map<lt_shape, std::unique_ptr<plan>> m_plans;
};

} // namespace ringscale::kernels::cuda
