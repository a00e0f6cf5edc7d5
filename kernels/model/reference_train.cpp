#include "kernels/model/reference_train.hpp"

#include "kernels/model/transformer.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <numeric>

namespace ringscale::kernels::model {

void fill_batch(std::uint64_t seed, std::int64_t vocab, std::int64_t first_seq, std::int64_t nseq,
                const std::vector<std::int64_t>& positions, std::int32_t* ids,
                std::int32_t* targets) {
    std::size_t k = 0;
    for (std::int64_t n = first_seq; n < first_seq + nseq; ++n)
        for (const std::int64_t pos : positions) {
            ids[k] = token_at(seed, vocab, n, pos);
            targets[k] = target_at(seed, vocab, n, pos);
            ++k;
        }
}

std::vector<double> reference_train(const model_config& cfg, std::uint64_t data_seed,
                                    std::int64_t sequences, std::int64_t seq_len, int steps,
                                    const adamw_params& hp, float* params, float* first_grads,
                                    train_context& ctx, const mask_view& mask,
                                    std::int64_t micro_batch) {
    reference_hooks hooks;
    hooks.micro_batch = micro_batch;
    const std::size_t n = param_layout(cfg).total();
    if (first_grads)
        hooks.on_step = [&](int step, double, const float*, const float* g) {
            if (step == 1)
                std::copy(g, g + n, first_grads);
        };
    return reference_train_steps(cfg, data_seed, sequences, seq_len, steps, hp, params, ctx, mask,
                                 hooks);
}

std::vector<double> reference_train_steps(const model_config& cfg, std::uint64_t data_seed,
                                          std::int64_t sequences, std::int64_t seq_len, int steps,
                                          const adamw_params& hp, float* params, train_context& ctx,
                                          const mask_view& mask, const reference_hooks& hooks) {
    const param_layout layout(cfg);
    executor& dev = ctx.exec();
    const std::int64_t mb = hooks.micro_batch;
    if (mb < 1 || sequences % mb != 0)
        throw config_error("reference_train: the micro-batch must divide the sequences");
    std::vector<std::int64_t> pos(static_cast<std::size_t>(seq_len));
    std::iota(pos.begin(), pos.end(), 0);
    local_attention_core core(dev, pos);
    core.reorder_keys(hooks.reorder_seed);
    ctx.precision_state().set_floor_reorder(hooks.reorder_seed);
    transformer model(cfg, {mb, seq_len}, core, ctx);
    model.set_attention_mask(mask);
    model.reserve();
    const std::size_t n = layout.total();
    dev_buffer<float> p(dev, n), grads(dev, n), m(dev, n), v(dev, n);
    p.upload(params, n);
    dev.zero(m.data(), m.bytes());
    dev.zero(v.data(), v.bytes());
    const std::size_t rows = pos.size() * static_cast<std::size_t>(mb);
    std::vector<std::int32_t> ids(rows), targets(rows);
    dev_buffer<std::int32_t> ids_dev(dev, rows), targets_dev(dev, rows);
    full_access access(layout, p.data(), grads.data());
    const auto total_tokens = static_cast<std::size_t>(sequences * seq_len);
    std::vector<std::int64_t> order = hooks.order;
    if (order.empty()) {
        order.resize(static_cast<std::size_t>(sequences));
        std::iota(order.begin(), order.end(), 0);
    }
    phase_timer timer;
    std::vector<double> losses;
    for (int step = 1; step <= steps; ++step) {
        dev.zero(grads.data(), grads.bytes());
        double loss = 0;
        for (std::size_t j = 0; j < order.size(); j += static_cast<std::size_t>(mb)) {
            for (std::int64_t q = 0; q < mb; ++q) // the micro-batch's sequences, in `order`
                fill_batch(data_seed, cfg.vocab, order[j + static_cast<std::size_t>(q)], 1, pos,
                           ids.data() + static_cast<std::size_t>(q) * pos.size(),
                           targets.data() + static_cast<std::size_t>(q) * pos.size());
            ids_dev.upload(ids.data(), ids.size()); // waits for the last sequence's compute
            targets_dev.upload(targets.data(), targets.size());
            loss += model.forward(access, ids_dev.data(), targets_dev.data(), total_tokens, timer);
            model.backward(access, timer);
        }
        const std::vector<float> g = hooks.on_step ? grads.download() : std::vector<float>{};
        optimizer_step(ctx, hp, step, n, p.data(), grads.data(), m.data(), v.data());
        ctx.precision_state().end_step(nullptr); // one rank: its amaxes are the global ones
        losses.push_back(loss);
        if (hooks.on_step) {
            const std::vector<float> now = p.download();
            hooks.on_step(step, loss, now.data(), g.data());
        }
    }
    const std::vector<float> out = p.download();
    std::copy(out.begin(), out.end(), params);
    return losses;
}

} // namespace ringscale::kernels::model
