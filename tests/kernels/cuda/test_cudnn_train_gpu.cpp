// The training step's attention through cuDNN (--attn-kernel cudnn): the whole model's loss
// and gradient with its attention forward and backward on cuDNN's fused attention (through
// the kernels' own dispatch, as train_step runs it) against the CPU backend, plain, with
// grouped-query attention and with packed documents, and against the same model on our own
// kernels. Skips, saying why, without a GPU or without cuDNN.
//
// Tolerances, fixed before the first run: the bounds of test_backend_train_gpu.cpp (loss within
// 1e-3 of the CPU's, gradient within 2e-2 max|g|). cuDNN writes O and each gradient piece in
// bf16 (one rounding of u = 2^-8 more than our kernels) and reads O rounded to bf16: a few u,
// well inside 2e-2; against our kernels the sum of both bounds.
#include "kernels/attention_path.hpp"
#include "kernels/dev_mask.hpp"
#include "kernels/mask_spec.hpp"
#include "kernels/model/reference_train.hpp"
#include "kernels/model/transformer.hpp"
#include "tests/kernels/cuda/train_model_rig.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;
using test_model::loss_and_grads;
using test_model::max_abs;
using test_model::small_model;

namespace {

class cudnn_train_gpu : public ::testing::Test {
  protected:
    void SetUp() override {
        RINGSCALE_SKIP_WITHOUT_DEVICE();
        if (!cudnn_compiled())
            GTEST_SKIP() << "this ringscale was built without cuDNN";
        m_dev = make_executor(device_kind::cuda);
        m_ctx = std::make_unique<train_context>(*m_dev, false);
    }
    void TearDown() override { set_attention_path(attn_path::automatic); }

    // The model on the GPU with the attention on `path`.
    double on_gpu(attn_path path, const model_config& cfg, std::vector<float>& g,
                  const mask_view& mask = {}) {
        set_attention_path(path);
        const double loss = loss_and_grads(*m_ctx, cfg, g, mask);
        set_attention_path(attn_path::automatic);
        return loss;
    }

    // cuDNN against the CPU backend and against our kernels, `what` naming the case.
    void expect_matches(const model_config& cfg, const char* what,
                        const std::shared_ptr<const attention_mask>& mask = nullptr) {
        std::unique_ptr<dev_mask> dm;
        if (mask)
            dm = std::make_unique<dev_mask>(*m_dev, mask);
        const mask_view on_dev = dm ? dm->view() : mask_view{};
        std::vector<float> g_cpu, g_cudnn, g_ours;
        const double l_cpu =
            loss_and_grads(default_cpu_context(), cfg, g_cpu, mask ? mask->view() : mask_view{});
        const double l_cudnn = on_gpu(attn_path::cudnn, cfg, g_cudnn, on_dev);
        const double l_ours = on_gpu(attn_path::automatic, cfg, g_ours, on_dev);
        EXPECT_NEAR(l_cudnn, l_cpu, 1e-3 * l_cpu) << what;
        EXPECT_NEAR(l_cudnn, l_ours, 2e-3 * l_cpu) << what;
        const double gmax = max_abs(g_cpu);
        ASSERT_GT(gmax, 0.0) << what;
        testing_support::expect_close(g_cudnn, g_cpu, static_cast<float>(2e-2 * gmax), 0.0f, what);
        testing_support::expect_close(g_cudnn, g_ours, static_cast<float>(4e-2 * gmax), 0.0f, what);
    }

    std::unique_ptr<executor> m_dev;
    std::unique_ptr<train_context> m_ctx;
};

} // namespace

TEST_F(cudnn_train_gpu, the_model_matches_the_cpu_backend_and_our_kernels) {
    expect_matches(small_model(), "cuDNN whole-model gradient");
}

TEST_F(cudnn_train_gpu, gqa_matches_the_cpu_backend_and_our_kernels) {
    model_config cfg = small_model();
    cfg.kv_heads = 1;
    expect_matches(cfg, "cuDNN GQA whole-model gradient");
}

// Packed documents: cuDNN cuts the block per document (kernels/cudnn_plan.hpp).
TEST_F(cudnn_train_gpu, packed_documents_match_the_cpu_backend_and_our_kernels) {
    mask_spec spec;
    spec.docs = "fixed:32";
    expect_matches(small_model(), "cuDNN masked whole-model gradient",
                   std::make_shared<const attention_mask>(spec, 64, true));
}
