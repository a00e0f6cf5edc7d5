#include "kernels/model/reference_train.hpp"

#include "kernels/model/transformer.hpp"

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
                                    train_context& ctx, const mask_view& mask) {
    const param_layout layout(cfg);
    executor& dev = ctx.exec();
    std::vector<std::int64_t> pos(static_cast<std::size_t>(seq_len));
    std::iota(pos.begin(), pos.end(), 0);
    local_attention_core core(dev, pos);
    transformer model(cfg, {1, seq_len}, core, ctx);
    model.set_attention_mask(mask);
    model.reserve();
    const std::size_t n = layout.total();
    dev_buffer<float> p(dev, n), grads(dev, n), m(dev, n), v(dev, n);
    p.upload(params, n);
    dev.zero(m.data(), m.bytes());
    dev.zero(v.data(), v.bytes());
    std::vector<std::int32_t> ids(pos.size()), targets(pos.size());
    dev_buffer<std::int32_t> ids_dev(dev, pos.size()), targets_dev(dev, pos.size());
    full_access access(layout, p.data(), grads.data());
    const auto total_tokens = static_cast<std::size_t>(sequences * seq_len);
    phase_timer timer;
    std::vector<double> losses;
    for (int step = 1; step <= steps; ++step) {
        dev.zero(grads.data(), grads.bytes());
        double loss = 0;
        for (std::int64_t s = 0; s < sequences; ++s) {
            fill_batch(data_seed, cfg.vocab, s, 1, pos, ids.data(), targets.data());
            ids_dev.upload(ids.data(), ids.size()); // waits for the last sequence's compute
            targets_dev.upload(targets.data(), targets.size());
            loss += model.forward(access, ids_dev.data(), targets_dev.data(), total_tokens, timer);
            model.backward(access, timer);
        }
        if (step == 1 && first_grads) {
            const std::vector<float> g = grads.download();
            std::copy(g.begin(), g.end(), first_grads);
        }
        optimizer_step(ctx, hp, step, n, p.data(), grads.data(), m.data(), v.data());
        losses.push_back(loss);
    }
    const std::vector<float> out = p.download();
    std::copy(out.begin(), out.end(), params);
    return losses;
}

} // namespace ringscale::kernels::model
