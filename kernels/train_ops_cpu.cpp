// The CPU backend of kernels/train_ops: each operation is the CPU kernel's call, unchanged, so
// a model run through it computes bit for bit what the kernels compute when called directly.
#include "kernels/cross_entropy.hpp"
#include "kernels/embedding.hpp"
#include "kernels/gelu.hpp"
#include "kernels/parallel.hpp"
#include "kernels/rmsnorm.hpp"
#include "kernels/train_ops.hpp"
#include "kernels/transformer.hpp"
#include "src/base/error.hpp"

namespace ringscale::kernels {

namespace {

class cpu_train_ops final : public train_ops {
  public:
    explicit cpu_train_ops(device& dev) : m_dev(dev) {
        if (dev.name() != "cpu")
            throw config_error("the CPU training backend needs the CPU device, not " + dev.name());
    }
    device& dev() override { return m_dev; }
    std::string precision() const override { return "fp32 (CPU kernels)"; }

    void embedding_fwd(std::size_t t, std::size_t v, std::size_t d, const float* table,
                       const std::int32_t* ids, float* out) override {
        kernels::embedding_fwd(t, v, d, table, ids, out);
    }
    void embedding_bwd(std::size_t t, std::size_t v, std::size_t d, const std::int32_t* ids,
                       const float* dout, float* dtable) override {
        kernels::embedding_bwd(t, v, d, ids, dout, dtable);
    }
    void rmsnorm_fwd(std::size_t rows, std::size_t dim, float eps, const float* x,
                     const float* gamma, float* y, float* inv_rms) override {
        kernels::rmsnorm_fwd(rows, dim, eps, x, gamma, y, inv_rms);
    }
    void rmsnorm_bwd(std::size_t rows, std::size_t dim, const float* x, const float* gamma,
                     const float* inv_rms, const float* dy, float* dx, float* dgamma) override {
        kernels::rmsnorm_bwd(rows, dim, x, gamma, inv_rms, dy, dx, dgamma);
    }
    void linear_fwd(const linear_shape& s, const float* x, const float* w, const float* b,
                    float* y) override {
        kernels::linear_fwd(s, x, w, b, y);
    }
    void linear_bwd(const linear_shape& s, const float* x, const float* w, const float* dy,
                    float* dx, float* dw, float* db) override {
        kernels::linear_bwd(s, x, w, dy, dx, dw, db);
    }
    void gelu_fwd(std::size_t n, const float* x, float* y) override { kernels::gelu_fwd(n, x, y); }
    void gelu_bwd(std::size_t n, const float* x, const float* dy, float* dx) override {
        kernels::gelu_bwd(n, x, dy, dx);
    }
    void add(std::size_t n, const float* a, const float* b, float* out) override {
        parallel_for(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i)
                out[i] = a[i] + b[i];
        });
    }
    void to_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
                 std::int64_t cols, std::int64_t col0, float* dst) override {
        kernels::to_bhsd(s, heads, d, src, cols, col0, dst);
    }
    void from_bhsd(const batch_shape& s, std::int64_t heads, std::int64_t d, const float* src,
                   std::int64_t cols, std::int64_t col0, float* dst) override {
        kernels::from_bhsd(s, heads, d, src, cols, col0, dst);
    }
    double cross_entropy_fwd(std::size_t t, std::size_t v, std::size_t total, const float* logits,
                             const std::int32_t* targets) override {
        return kernels::cross_entropy_fwd(t, v, total, logits, targets);
    }
    void cross_entropy_bwd(std::size_t t, std::size_t v, std::size_t total, const float* logits,
                           const std::int32_t* targets, float* dlogits) override {
        kernels::cross_entropy_bwd(t, v, total, logits, targets, dlogits);
    }
    void adamw_step(const adamw_params& hp, std::int64_t step, std::size_t n, float* param,
                    const float* grad, float* m, float* v) override {
        const op_profile::scope timed(profile(), op_kind::optimizer);
        kernels::adamw_step(hp, step, n, param, grad, m, v);
    }
    std::unique_ptr<attention_core> local_attention(std::vector<std::int64_t> positions) override {
        return std::make_unique<local_attention_core>(std::move(positions));
    }

  private:
    device& m_dev;
};

} // namespace

std::unique_ptr<train_ops> make_cpu_train_ops(device& dev) {
    return std::make_unique<cpu_train_ops>(dev);
}

train_ops& default_cpu_train_ops() {
    static const std::unique_ptr<device> dev = make_cpu_device();
    static const std::unique_ptr<train_ops> ops = make_cpu_train_ops(*dev);
    return *ops;
}

} // namespace ringscale::kernels
