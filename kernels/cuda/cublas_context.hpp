// A cuBLAS handle bound to one stream, created once and reused by every GEMM issued on that
// stream (creating a handle costs milliseconds and allocates device workspace). Move-only
// RAII. The header names no CUDA or cuBLAS type; the CUDA executor owns one per GEMM mode.
#pragma once

namespace ringscale::kernels::cuda {

/// Out-of-line thrower for RINGSCALE_CUBLAS_CALL: error(error_kind::cuda) naming the call,
/// the rank, file and line, and cuBLAS's status name.
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);

} // namespace ringscale::kernels::cuda

/// Evaluate a cuBLAS call once; throw a cuda error unless it returned CUBLAS_STATUS_SUCCESS (0).
#define RINGSCALE_CUBLAS_CALL(expr)                                                                \
    do {                                                                                           \
        const auto ringscale_cublas_status_ = (expr);                                              \
        if (static_cast<int>(ringscale_cublas_status_) != 0)                                       \
            ::ringscale::kernels::cuda::throw_cublas_error(                                        \
                static_cast<int>(ringscale_cublas_status_), #expr, __FILE__, __LINE__);            \
    } while (0)

namespace ringscale::kernels::cuda {

/// Owns one cublasHandle_t on the CURRENT device, bound to `stream`. Move-only.
class cublas_context {
  public:
    /// Create the handle on the current device and bind it to `stream` (a cudaStream_t;
    /// nullptr: the legacy default stream). `allow_tf32`: let fp32 GEMMs use TF32 tensor cores
    /// (faster, ~1e-3 relative error); false keeps full fp32, which the tests rely on.
    explicit cublas_context(void* stream = nullptr, bool allow_tf32 = false);
    ~cublas_context();
    cublas_context(const cublas_context&) = delete;
    cublas_context& operator=(const cublas_context&) = delete;
    cublas_context(cublas_context&& other) noexcept;
    cublas_context& operator=(cublas_context&& other) noexcept;

    /// The cublasHandle_t; valid while this context lives.
    void* handle() const { return m_handle; }
    /// The stream every call through this handle is issued on (a cudaStream_t).
    void* stream() const { return m_stream; }

  private:
    void* m_handle = nullptr; // cublasHandle_t
    void* m_stream = nullptr; // cudaStream_t, not owned
};

} // namespace ringscale::kernels::cuda
