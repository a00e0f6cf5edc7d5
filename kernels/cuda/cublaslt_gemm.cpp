#include "kernels/cuda/cublaslt_gemm.hpp"

#include "kernels/cuda/cublas_context.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace ringscale::kernels::cuda {

namespace {

cudaDataType_t cuda_type(lt_type t) {
    switch (t) {
    case lt_type::bf16:
        return CUDA_R_16BF;
    case lt_type::f16:
        return CUDA_R_16F;
    case lt_type::e4m3:
        return CUDA_R_8F_E4M3;
    case lt_type::e5m2:
        return CUDA_R_8F_E5M2;
    }
    return CUDA_R_16BF;
}

cublasLtHandle_t as_handle(void* h) {
    return static_cast<cublasLtHandle_t>(h);
}

} // namespace

// One shape's descriptor, layouts and algorithm. cuBLASLt is column-major: row-major D[m, n]
// is column-major Dᵀ [n, m] = op(B)ᵀ · op(A)ᵀ, so B comes first (as cuBLASLt's A) and A
// second, each transposed exactly when it is stored as given (see lt_shape).
struct cublaslt_gemm::plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr; // cuBLASLt's A, B, D
    cublasLtMatmulAlgo_t algo{};
    bool fp8 = false;
    ~plan() {
        if (d)
            cublasLtMatrixLayoutDestroy(d);
        if (b)
            cublasLtMatrixLayoutDestroy(b);
        if (a)
            cublasLtMatrixLayoutDestroy(a);
        if (desc)
            cublasLtMatmulDescDestroy(desc);
    }
};

cublaslt_gemm::cublaslt_gemm(void* stream, std::size_t workspace_bytes)
    : m_stream(stream), m_workspace_bytes(workspace_bytes) {
    cublasLtHandle_t h = nullptr;
    RINGSCALE_CUBLAS_CALL(cublasLtCreate(&h));
    m_handle = h;
    if (workspace_bytes > 0) {
        const cudaError_t e = cudaMalloc(&m_workspace, workspace_bytes);
        if (e != cudaSuccess) {
            cublasLtDestroy(h); // the destructor does not run for a constructor that throws
            RINGSCALE_CUDA_CALL(e);
        }
    }
}

cublaslt_gemm::~cublaslt_gemm() {
    m_plans.clear(); // descriptors before the handle
    if (m_workspace)
        cudaFree(m_workspace); // never throws; a failure here is already sticky
    if (m_handle)
        cublasLtDestroy(as_handle(m_handle));
}

cublaslt_gemm::plan& cublaslt_gemm::plan_for(const lt_shape& s) {
    if (const auto it = m_plans.find(s); it != m_plans.end())
        return *it->second;
    if (const std::string why = lt_refusal(s); !why.empty())
        throw config_error(why);
    auto p = std::make_unique<plan>();
    p->fp8 = lt_is_fp8(s.a);
    RINGSCALE_CUBLAS_CALL(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = s.b_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = s.a_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    RINGSCALE_CUBLAS_CALL(
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    RINGSCALE_CUBLAS_CALL(
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (p->fp8) { // products accumulate in fp32 without the fast (split) accumulation
        const std::int8_t fast = 0;
        RINGSCALE_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(
            p->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
    }
    const auto m = static_cast<std::uint64_t>(s.m), n = static_cast<std::uint64_t>(s.n),
               k = static_cast<std::uint64_t>(s.k);
    // cuBLASLt's A is row-major B: [k, n] as stored is column-major [n, k] (ld n); [n, k] as
    // stored is column-major [k, n] (ld k), transposed. Likewise its B is row-major A.
    RINGSCALE_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&p->a, cuda_type(s.b), s.b_trans ? k : n,
                                                     s.b_trans ? n : k,
                                                     static_cast<std::int64_t>(s.b_trans ? k : n)));
    RINGSCALE_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&p->b, cuda_type(s.a), s.a_trans ? m : k,
                                                     s.a_trans ? k : m,
                                                     static_cast<std::int64_t>(s.a_trans ? m : k)));
    RINGSCALE_CUBLAS_CALL(
        cublasLtMatrixLayoutCreate(&p->d, CUDA_R_32F, n, m, static_cast<std::int64_t>(n)));
    cublasLtMatmulPreference_t pref = nullptr;
    RINGSCALE_CUBLAS_CALL(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = [&] {
        const cublasStatus_t a =
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &m_workspace_bytes, sizeof(m_workspace_bytes));
        if (a != CUBLAS_STATUS_SUCCESS)
            return a;
        return cublasLtMatmulAlgoGetHeuristic(as_handle(m_handle), p->desc, p->a, p->b, p->d, p->d,
                                              pref, 1, &result, &found);
    }();
    cublasLtMatmulPreferenceDestroy(pref);
    RINGSCALE_CUBLAS_CALL(st);
    if (found < 1)
        throw error(error_kind::cuda,
                    fmt::format("cuBLASLt has no algorithm for a {} x {} GEMM (m {}, n {}, k {})",
                                lt_type_name(s.a), lt_type_name(s.b), s.m, s.n, s.k));
    p->algo = result.algo;
    return *m_plans.emplace(s, std::move(p)).first->second;
}

void cublaslt_gemm::run(const lt_shape& s, const void* a, const void* b, float* d, float alpha,
                        float beta, const float* a_scale, const float* b_scale) {
    plan& p = plan_for(s);
    if (p.fp8 != (a_scale && b_scale))
        throw config_error("cuBLASLt GEMM: fp8 operands need both scales, others none");
    if (p.fp8) { // cuBLASLt's A is our B: its scale goes with it
        RINGSCALE_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale, sizeof(b_scale)));
        RINGSCALE_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale, sizeof(a_scale)));
    }
    RINGSCALE_CUBLAS_CALL(cublasLtMatmul(as_handle(m_handle), p.desc, &alpha, b, p.a, a, p.b, &beta,
                                         d, p.d, d, p.d, &p.algo, m_workspace, m_workspace_bytes,
                                         static_cast<cudaStream_t>(m_stream)));
}

} // namespace ringscale::kernels::cuda
