#include "kernels/model_train.hpp"

#include "kernels/transformer.hpp"

#include <algorithm>
#include <numeric>

namespace ringscale::kernels {

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
                                    const adamw_params& hp, float* params, float* first_grads) {
    const param_layout layout(cfg);
    std::vector<std::int64_t> pos(static_cast<std::size_t>(seq_len));
    std::iota(pos.begin(), pos.end(), 0);
    local_attention_core core(pos);
    transformer model(cfg, {1, seq_len}, core);
    model.reserve();
    host_buffer<float> grads(layout.total()), m(layout.total()), v(layout.total());
    host_buffer<std::int32_t> ids(pos.size()), targets(pos.size());
    full_access access(layout, params, grads.data());
    const auto total_tokens = static_cast<std::size_t>(sequences * seq_len);
    phase_timer timer;
    std::vector<double> losses;
    for (int step = 1; step <= steps; ++step) {
        std::fill(grads.begin(), grads.end(), 0.0f);
        double loss = 0;
        for (std::int64_t n = 0; n < sequences; ++n) {
            fill_batch(data_seed, cfg.vocab, n, 1, pos, ids.data(), targets.data());
            loss += model.forward(access, ids.data(), targets.data(), total_tokens, timer);
            model.backward(access, timer);
        }
        if (step == 1 && first_grads)
            std::copy(grads.begin(), grads.end(), first_grads);
        adamw_step(hp, step, layout.total(), params, grads.data(), m.data(), v.data());
        losses.push_back(loss);
    }
    return losses;
}

} // namespace ringscale::kernels
