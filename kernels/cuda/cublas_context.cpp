#include "kernels/cuda/cublas_context.hpp"

#include "src/base/error.hpp"

#include <cublas_v2.h>
#include <utility>

namespace ringscale::kernels::cuda {

namespace {
cublasHandle_t as_handle(void* h) {
    return static_cast<cublasHandle_t>(h);
}
} // namespace

void throw_cublas_error(int status, const char* call, const char* file, int line) {
    const auto s = static_cast<cublasStatus_t>(status);
    throw_call_error(error_kind::cuda, call,
                     std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s), file,
                     line);
}

cublas_context::cublas_context(void* stream, bool allow_tf32) : m_stream(stream) {
    cublasHandle_t handle = nullptr;
    RINGSCALE_CUBLAS_CALL(cublasCreate(&handle));
    m_handle = handle;
    try {
        RINGSCALE_CUBLAS_CALL(cublasSetStream(handle, static_cast<cudaStream_t>(stream)));
        // Explicit, so a library default never silently lowers fp32 GEMMs to TF32.
        RINGSCALE_CUBLAS_CALL(cublasSetMathMode(handle, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                   : CUBLAS_DEFAULT_MATH));
    } catch (...) {
        cublasDestroy(handle); // the destructor does not run for a constructor that throws
        throw;
    }
}

cublas_context::~cublas_context() {
    if (m_handle)
        cublasDestroy(as_handle(m_handle)); // never throws; a failure here is already sticky
}

cublas_context::cublas_context(cublas_context&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)),
      m_stream(std::exchange(other.m_stream, nullptr)) {}

cublas_context& cublas_context::operator=(cublas_context&& other) noexcept {
    if (this != &other) {
        std::swap(m_handle, other.m_handle);
        std::swap(m_stream, other.m_stream);
    }
    return *this;
}

} // namespace ringscale::kernels::cuda
