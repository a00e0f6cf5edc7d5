// train_step --dtype on a GPU, planned (jobs/train_lowp): which GPU and which shapes run the
// dtype's GEMMs, and the device bytes of their buffers.
#include "jobs/train_lowp.hpp"

#include <gtest/gtest.h>

using namespace ringscale;

namespace {

jobs::train_problem problem(kernels::model::train_dtype t) {
    jobs::train_problem pr;
    pr.model.hidden = 256;
    pr.model.heads = 4;
    pr.model.vocab = 512;
    pr.seq_len = 128;
    pr.cp = 2;
    pr.precision.dtype = t;
    return pr;
}

} // namespace

TEST(train_lowp, each_dtype_runs_where_the_gpu_and_the_shapes_allow_it) {
    using kernels::model::train_dtype;
    EXPECT_EQ(jobs::lowp_gpu_refusal(problem(train_dtype::fp32), 7, 0), "");
    EXPECT_EQ(jobs::lowp_gpu_refusal(problem(train_dtype::bf16), 8, 0), "");
    EXPECT_NE(jobs::lowp_gpu_refusal(problem(train_dtype::fp16), 7, 5), "");
    EXPECT_EQ(jobs::lowp_gpu_refusal(problem(train_dtype::fp8), 9, 0), "");
    EXPECT_EQ(jobs::lowp_gpu_refusal(problem(train_dtype::fp8), 0, 0), ""); // not known
    EXPECT_NE(jobs::lowp_gpu_refusal(problem(train_dtype::fp8), 8, 9).find("needs Hopper"),
              std::string::npos);
    auto pr = problem(train_dtype::fp8);
    pr.seq_len = 200; // 100 rows a cp rank
    std::string why = jobs::lowp_gpu_refusal(pr, 9, 0);
    EXPECT_NE(why.find("the QKV GEMM (100 rows, 256 -> 768)"), std::string::npos) << why;
    pr = problem(train_dtype::fp8);
    pr.model.ffn = 1000; // the MLP's widths
    why = jobs::lowp_gpu_refusal(pr, 9, 0);
    EXPECT_NE(why.find("the MLP up GEMM"), std::string::npos) << why;
    pr.precision.dtype = train_dtype::bf16;
    EXPECT_EQ(jobs::lowp_gpu_refusal(pr, 9, 0), "");
}

// --dtype's GEMM buffers on the device, counted by hand for a small model (hidden 64, vocab
// 96, FFN 256, 32 rows): the largest A operand is dy of the MLP up (32 x 256), the largest B
// operand a 64 x 256 weight, the rounded dy of the up projection 32 x 256 fp32, and
// cuBLASLt's 32 MiB workspace.
TEST(train_plan, low_precision_gemm_buffers_are_counted_for_the_device) {
    kernels::model::model_config m;
    m.hidden = 64;
    m.heads = 4;
    m.vocab = 96;
    using kernels::model::train_dtype;
    const double ws = 32.0 * (1 << 20);
    EXPECT_EQ(jobs::lowp_scratch_bytes(m, train_dtype::fp32, 32), 0.0);
    EXPECT_EQ(jobs::lowp_scratch_bytes(m, train_dtype::bf16, 32),
              2.0 * (32 * 256 + 64 * 256) + 4.0 * 32 * 256 + ws);
    EXPECT_EQ(jobs::lowp_scratch_bytes(m, train_dtype::fp8, 32),
              1.0 * (32 * 256 + 64 * 256) + 4.0 * 32 * 256 + ws);
    m.vocab = 4096; // now the logits' dy and W are the largest
    EXPECT_EQ(jobs::lowp_scratch_bytes(m, train_dtype::fp16, 32),
              2.0 * (32 * 4096 + 64 * 4096) + 4.0 * 32 * 4096 + ws);
}
