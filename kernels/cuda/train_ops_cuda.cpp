// The CUDA backend of kernels/train_ops: every operation on the device's compute stream,
// GEMMs through one cuBLAS handle bound to it (fp32, or TF32 tensor cores when asked for),
// the nn kernels of kernels/cuda, and attention through device_attention_core on bf16 Q, K,
// V and dO.
#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/cross_entropy.cuh"
#include "kernels/cuda/dense.cuh"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/train_layout.cuh"
#include "kernels/train_ops.hpp"
#include "kernels/transformer.hpp"
#include "src/base/error.hpp"

namespace ringscale::kernels {

namespace {

class cuda_train_ops final : public train_ops {
  public:
    cuda_train_ops(device& dev, bool allow_tf32)
        : m_dev(dev), m_tf32(allow_tf32), m_blas(dev.stream(), allow_tf32), m_loss(dev, 1) {
        if (dev.name() != "cuda")
            throw config_error("the CUDA training backend needs the CUDA device, not " +
                               dev.name());
    }
    device& dev() override { return m_dev; }
    std::string precision() const override {
        return m_tf32 ? "fp32 storage, TF32 GEMMs (cuBLAS), attention Q/K/V/dO in bf16"
                      : "fp32 (GEMMs in fp32 through cuBLAS), attention Q/K/V/dO in bf16";
    }

    void embedding_fwd(std::size_t t, std::size_t v, std::size_t d, const float* table,
                       const std::int32_t* ids, float* out) override {
        cuda::embedding_fwd_cuda(t, v, d, table, ids, out, m_dev.stream());
    }
    void embedding_bwd(std::size_t t, std::size_t v, std::size_t d, const std::int32_t* ids,
                       const float* dout, float* dtable) override {
        cuda::embedding_bwd_cuda(t, v, d, ids, dout, dtable, m_dev.stream());
    }
    void rmsnorm_fwd(std::size_t rows, std::size_t dim, float eps, const float* x,
                     const float* gamma, float* y, float* inv_rms) override {
        cuda::rmsnorm_fwd_cuda(rows, dim, eps, x, gamma, y, inv_rms, m_dev.stream());
    }
    void rmsnorm_bwd(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                     const float* inv_rms, const float* dy, float* dx, float* dgamma) override {
        cuda::rmsnorm_bwd_cuda(rows, dim, x, gamma, inv_rms, dy, dx, dgamma, m_dev.stream());
    }
    void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b,
                    float* y) override {
        cuda::linear_fwd_cuda(m_blas, s, x, w, b, y);
    }
    void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy,
                    float* dx, float* dw, float* db) override {
        cuda::linear_bwd_cuda(m_blas, s, x, w, dy, dx, dw, db);
    }
    void gelu_fwd(std::size_t n, const float* x, float* y) override {
        cuda::gelu_fwd_cuda(n, x, y, m_dev.stream());
    }
    void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx) override {
        cuda::gelu_bwd_cuda(n, x, dy, dx, m_dev.stream());
    }
    void add(std::size_t n, const float* a, const float* b, float* out) override {
        m_dev.add(n, a, b, out);
    }
    void to_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
                 std::int64_t cols, std::int64_t col0, float* dst) override {
        cuda::to_bhsd_cuda(s.batch, s.rows, heads, d, src, cols, col0, dst, m_dev.stream());
    }
    void from_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
                   std::int64_t cols, std::int64_t col0, float* dst) override {
        cuda::from_bhsd_cuda(s.batch, s.rows, heads, d, src, cols, col0, dst, m_dev.stream());
    }
    double cross_entropy_fwd(std::size_t t, std::size_t v, std::size_t total, const float* logits,
                             const std::int32_t* targets) override {
        if (m_row_loss.size() < t)
            m_row_loss.allocate(m_dev, t);
        cuda::cross_entropy_fwd_cuda(t, v, total, logits, targets, m_row_loss.data(), m_loss.data(),
                                     m_dev.stream());
        return m_loss.download(1)[0]; // waits for the stream
    }
    void cross_entropy_bwd(std::size_t t, std::size_t v, std::size_t total, const float* logits,
                           const std::int32_t* targets, float* dlogits) override {
        cuda::cross_entropy_bwd_cuda(t, v, total, logits, targets, dlogits, 1.0f, m_dev.stream());
    }
    void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                    const float* grad, float* m, float* v) override {
        cuda::adamw_step_cuda(hp, step, n, param, grad, m, v, m_dev.stream());
    }
    std::unique_ptr<attention_core> local_attention(std::vector<std::int64_t> positions) override {
        return std::make_unique<device_attention_core>(m_dev, std::move(positions), elem::bf16);
    }

  private:
    device& m_dev;
    bool m_tf32;
    cuda::cublas_context m_blas;
    dev_buffer<double> m_loss;
    dev_buffer<float> m_row_loss;
};

} // namespace

std::unique_ptr<train_ops> make_cuda_train_ops(device& dev, bool allow_tf32) {
    return std::make_unique<cuda_train_ops>(dev, allow_tf32);
}

} // namespace ringscale::kernels
