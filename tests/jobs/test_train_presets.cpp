// The training presets people compare with published runs (jobs/presets/llama3_*.ini), read
// from the files themselves: their model shapes, their FLOPs per layer against a count by
// hand, what one GPU's memory holds by the launcher's estimate, and the estimate itself
// against the CPU allocator on the same shapes scaled down.
#include "jobs/registry.hpp"
#include "jobs/train_problem.hpp"
#include "kernels/model/attention_core.hpp"
#include "kernels/model/reference_train.hpp"
#include "kernels/model/transformer.hpp"
#include "src/base/memory.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>

using namespace ringscale;
using namespace ringscale::jobs;
namespace m = ringscale::kernels::model;

namespace {

// The train_step options of preset `name` over the defaults: "key = a,b" lines, '#' comments;
// the launcher's own keys (device, warmup, ...) are left out.
param_lists preset(const std::string& name) {
    param_lists l;
    for (const auto& o : train_options())
        l[o.name] = {o.default_value};
    std::ifstream in(std::string(RINGSCALE_PRESETS_DIR) + "/" + name);
    EXPECT_TRUE(in.good()) << name;
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos)
            continue;
        auto trim = [](std::string s) {
            s.erase(0, s.find_first_not_of(' '));
            s.erase(s.find_last_not_of(' ') + 1);
            return s;
        };
        const std::string key = trim(line.substr(0, eq));
        if (!l.count(key))
            continue;
        std::vector<std::string> values;
        std::stringstream parts(trim(line.substr(eq + 1)));
        for (std::string v; std::getline(parts, v, ',');)
            values.push_back(trim(v));
        l[key] = values;
    }
    return l;
}

launch_config on_gpu(const param_lists& l) {
    launch_config cfg;
    cfg.jobs = {"train_step"};
    cfg.params = l;
    return cfg;
}

launch_info gpu(int ranks, double gib) {
    launch_info li;
    li.world_size = ranks;
    li.device = device_kind::cuda;
    li.comm = comm_kind::nccl;
    li.host_bytes_per_rank = 1ull << 40;
    li.device_bytes_per_rank = static_cast<std::uint64_t>(gib * (1ull << 30));
    return li;
}

// The preset's case with `layers` layers, as the launcher plans it at np=1.
train_problem problem(param_lists l, std::int64_t layers) {
    l["layers"] = {std::to_string(layers)};
    const auto cases = plan_job(find_job("train_step"), l, gpu(1, 1e6));
    EXPECT_FALSE(cases.empty());
    return read_train_problem(cases.at(0).values, 1);
}

} // namespace

TEST(train_presets, llama3_8b_shape_and_flops_per_layer_by_hand) {
    const train_problem pr = problem(preset("llama3_8b.ini"), 2);
    EXPECT_EQ(pr.model.hidden, 4096);
    EXPECT_EQ(pr.model.heads, 32);
    EXPECT_EQ(pr.model.kv_count(), 8);
    EXPECT_EQ(pr.model.head_dim(), 128);
    EXPECT_EQ(pr.model.ffn_width(), 14336);
    EXPECT_EQ(pr.model.mlp, m::mlp_kind::swiglu);
    EXPECT_EQ(pr.model.vocab, 128256);
    // One layer by hand: Wq 4096x4096, Wk and Wv 1024x4096 each, Wo 4096x4096, gate and up
    // 14336x4096 each, down 4096x14336: 218,103,808 weights, Llama 3 8B's per layer; with
    // our two norms and three biases (4096 + 4096 + 4096 + 28672 + 4096): 218,148,864.
    const double weights =
        4096.0 * 4096 + 2 * 1024.0 * 4096 + 4096.0 * 4096 + 2 * 14336.0 * 4096 + 4096.0 * 14336;
    EXPECT_DOUBLE_EQ(weights, 218103808.0);
    const double per_layer_params = 218148864.0;
    // 6 FLOPs a parameter and token, and causal attention 12 x S^2/2 x hidden a sequence.
    const double tokens = 8192, s = 8192;
    const double hand = 6 * per_layer_params * tokens + 12.0 * 1 * s * s / 2 * 4096;
    const double counted =
        pr.flops_per_step() - problem(preset("llama3_8b.ini"), 1).flops_per_step();
    EXPECT_DOUBLE_EQ(counted, hand);
    // GQA counted: the same layer with 32 K/V heads has 2 x 3 x 4096 x 4096 more weights.
    param_lists mha = preset("llama3_8b.ini");
    mha["kv-heads"] = {"0"};
    EXPECT_DOUBLE_EQ(problem(mha, 2).flops_per_step() - problem(mha, 1).flops_per_step() - counted,
                     6.0 * 2 * 3072 * 4096 * tokens);
}

TEST(train_presets, llama3_70b_flops_per_layer_by_hand) {
    const train_problem pr = problem(preset("llama3_70b.ini"), 2);
    EXPECT_EQ(pr.model.kv_count(), 8);
    EXPECT_EQ(pr.model.head_dim(), 128);
    // Wq 8192², Wk and Wv 1024x8192, Wo 8192², gate and up 28672x8192, down 8192x28672
    // (855,638,016, Llama 3 70B's per layer), + norms and biases 4 x 8192 + 57344.
    const double per_layer_params = 855638016.0 + 4 * 8192 + 57344;
    const double hand = 6 * per_layer_params * 8192 + 12.0 * 8192.0 * 8192 / 2 * 8192;
    EXPECT_DOUBLE_EQ(pr.flops_per_step() - problem(preset("llama3_70b.ini"), 1).flops_per_step(),
                     hand);
}

// What one GPU holds, by the estimate the launcher checks before a launch (an 80 GB H100 shows
// about 79 GiB, a 141 GB H200 about 139): the 8B-like preset's 2 and 6 layers fit the H100; the
// 70B-like 1 layer fits the H200 but not the H100, 2 layers the H200, 4 layers neither, each
// case that does not fit skipped with its estimate.
TEST(train_presets, one_gpu_holds_what_the_comments_say) {
    const double h100 = 79, h200 = 139;
    const auto b8 = plan_launch(on_gpu(preset("llama3_8b.ini")), gpu(1, h100));
    ASSERT_EQ(b8.size(), 2u);
    for (const auto& c : b8)
        EXPECT_TRUE(c.plan.skip_reason.empty()) << c.plan.skip_reason;
    param_lists ddp70 = preset("llama3_70b.ini");
    ddp70["dp-variant"] = {"ddp"};
    const auto on_h100 = plan_launch(on_gpu(ddp70), gpu(1, h100));
    const auto on_h200 = plan_launch(on_gpu(ddp70), gpu(1, h200));
    ASSERT_EQ(on_h100.size(), 3u);
    ASSERT_EQ(on_h200.size(), 3u);
    const auto skipped = [](const auto& c) {
        return c.plan.skip_reason.find("of device memory per rank, device has") !=
               std::string::npos;
    };
    EXPECT_TRUE(skipped(on_h100[0])) << on_h100[0].plan.bytes_per_rank;
    EXPECT_FALSE(skipped(on_h200[0])) << on_h200[0].plan.skip_reason;
    EXPECT_FALSE(skipped(on_h200[1])) << on_h200[1].plan.skip_reason;
    EXPECT_TRUE(skipped(on_h200[2])) << on_h200[2].plan.bytes_per_rank;
    // Long context: 128K tokens a step fit no single GPU; cp = 8 on 8 GPUs holds every S.
    const auto long1 = plan_launch(on_gpu(preset("llama3_8b_long.ini")), gpu(1, h200));
    ASSERT_EQ(long1.size(), 5u);
    for (const auto& c : long1)
        EXPECT_TRUE(skipped(c)) << c.plan.bytes_per_rank;
    param_lists cp8 = preset("llama3_8b_long.ini");
    cp8["cp"] = {"8"};
    for (const auto& c : plan_launch(on_gpu(cp8), gpu(8, h100)))
        EXPECT_FALSE(skipped(c)) << c.plan.values.text("train-seq-len") << " "
                                 << c.plan.bytes_per_rank;
}

// The activation estimate against what the CPU executor really allocates (tracked host
// memory), for the presets' shapes scaled down 16x in width: the model's buffers exactly, and
// a whole forward and backward within the estimate plus the attention's scratch.
TEST(train_presets, activation_estimate_matches_the_cpu_allocator_scaled_down) {
    for (const char* name : {"llama3_8b.ini", "llama3_70b.ini"}) {
        m::model_config c = problem(preset(name), 1).model;
        c.layers = 2;
        c.hidden /= 16;
        c.heads /= 16;
        c.kv_heads = std::max<std::int64_t>(1, c.kv_heads / 16);
        c.ffn /= 16;
        c.vocab /= 16;
        if (c.head_dim() != 128)
            c.heads = c.hidden / 128;
        ASSERT_NO_THROW(m::model_check(c)) << name;
        const kernels::batch_shape shape{2, 256};
        const double want = 4.0 * static_cast<double>(m::transformer::activation_floats(c, shape));
        std::vector<std::int64_t> pos(256);
        std::iota(pos.begin(), pos.end(), 0);
        m::local_attention_core core(m::default_cpu_context().exec(), pos);
        host_memory::reset_peak();
        const std::uint64_t before = host_memory::peak_bytes();
        m::transformer model(c, shape, core);
        model.reserve();
        EXPECT_EQ(static_cast<double>(host_memory::peak_bytes() - before), want) << name;
        // A step: the model's buffers plus the attention core's and the loss's scratch.
        const m::param_layout layout(c);
        std::vector<float> params(layout.total()), grads(layout.total(), 0.0f);
        m::init_params(c, layout, 1, params.data());
        std::vector<std::int32_t> ids(512), targets(512);
        m::fill_batch(1, c.vocab, 0, 2, pos, ids.data(), targets.data());
        m::full_access access(layout, params.data(), grads.data());
        phase_timer timer;
        const double loss = model.forward(access, ids.data(), targets.data(), 512, timer);
        model.backward(access, timer);
        EXPECT_GT(loss, 0.0);
        const double step = static_cast<double>(host_memory::peak_bytes() - before);
        EXPECT_GE(step, want) << name;
        EXPECT_LE(step, want + (16u << 20)) << name; // bytes_per_rank's attention slack
    }
}
