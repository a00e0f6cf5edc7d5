// The GPU training tests' shared model: a small configuration, and its loss and whole-batch
// gradient on 2 seeded sequences of 64 tokens on any training context (the CPU backend, the
// CUDA kernels, cuDNN's attention), so each backend runs the same step.
#pragma once

#include "kernels/model/reference_train.hpp"
#include "kernels/model/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace ringscale::test_model {

/// Two layers of width 128, 2 heads, a vocabulary of 96.
inline kernels::model::model_config small_model() {
    kernels::model::model_config c;
    c.layers = 2;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 96;
    return c;
}

/// The largest |x| of `v`.
inline double max_abs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v)
        m = std::max(m, static_cast<double>(std::fabs(x)));
    return m;
}

/// Loss and whole-batch gradient of `cfg` on 2 sequences of 64 tokens on `ctx`, attending
/// through `mask` too when it is given.
inline double loss_and_grads(kernels::model::train_context& ctx,
                             const kernels::model::model_config& cfg, std::vector<float>& grads,
                             const kernels::mask_view& mask = {}) {
    using namespace kernels;
    using namespace kernels::model;
    executor& dev = ctx.exec();
    const param_layout layout(cfg);
    std::vector<float> params(layout.total());
    init_params(cfg, layout, 3, params.data());
    std::vector<std::int64_t> pos(64);
    std::iota(pos.begin(), pos.end(), 0);
    std::vector<std::int32_t> ids(128), targets(128);
    fill_batch(5, cfg.vocab, 0, 2, pos, ids.data(), targets.data());
    dev_buffer<float> p(dev, params), g(dev, layout.total());
    dev.zero(g.data(), g.bytes());
    dev_buffer<std::int32_t> ids_dev(dev, ids), targets_dev(dev, targets);
    local_attention_core core(dev, pos);
    transformer model(cfg, {2, 64}, core, ctx);
    model.set_attention_mask(mask);
    model.reserve();
    full_access access(layout, p.data(), g.data());
    phase_timer timer;
    const double loss = model.forward(access, ids_dev.data(), targets_dev.data(), 128, timer);
    model.backward(access, timer);
    dev.finish_iteration(timer);
    grads = g.download();
    return loss;
}

} // namespace ringscale::test_model
