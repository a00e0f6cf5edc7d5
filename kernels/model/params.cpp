#include "kernels/model/params.hpp"

#include "kernels/random.hpp"
#include "src/base/error.hpp"
#include "src/base/shape_rules.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::kernels::model {

const char* mlp_name(mlp_kind k) {
    return k == mlp_kind::swiglu ? "swiglu" : "gelu";
}

mlp_kind parse_mlp(const std::string& name) {
    if (name == "gelu")
        return mlp_kind::gelu;
    if (name == "swiglu")
        return mlp_kind::swiglu;
    throw config_error("--mlp must be gelu or swiglu (got '" + terminal_text(name) + "')");
}

void model_check(const model_config& cfg) {
    rules::check_model(cfg.layers, cfg.hidden, cfg.heads, cfg.vocab); // shared with predict
    if (cfg.kv_heads < 0 || cfg.ffn < 0)
        throw config_error(fmt::format("--kv-heads ({}) and --ffn ({}) must be >= 0 (0: the "
                                       "default)",
                                       cfg.kv_heads, cfg.ffn));
    if (cfg.heads % cfg.kv_count() != 0)
        throw config_error(
            fmt::format("--heads {} is not divisible by --kv-heads {}", cfg.heads, cfg.kv_count()));
}

param_layout::param_layout(const model_config& cfg) {
    const auto h = static_cast<std::size_t>(cfg.hidden);
    const auto v = static_cast<std::size_t>(cfg.vocab);
    std::size_t at = 0;
    auto take = [&at](std::size_t n) {
        const std::size_t off = at;
        at += n;
        return off;
    };
    const auto q = static_cast<std::size_t>(cfg.qkv_width());
    const auto up = static_cast<std::size_t>(cfg.ffn_up());
    const auto f = static_cast<std::size_t>(cfg.ffn_width());
    m_block.norm1 = take(h);
    m_block.wqkv = take(q * h);
    m_block.wo = take(h * h);
    m_block.bo = take(h);
    m_block.norm2 = take(h);
    m_block.w1 = take(up * h);
    m_block.b1 = take(up);
    m_block.w2 = take(f * h);
    m_block.b2 = take(h);
    m_block.size = at;
    at = 0;
    m_head.norm = take(h);
    m_head.wout = take(v * h);
    m_head.bout = take(v);
    m_head.size = at;
    m_units.push_back({0, v * h});
    for (std::int64_t l = 0; l < cfg.layers; ++l)
        m_units.push_back({m_units.back().offset + m_units.back().size, m_block.size});
    m_units.push_back({m_units.back().offset + m_units.back().size, m_head.size});
    m_total = m_units.back().offset + m_units.back().size;
}

std::size_t param_layout::max_unit() const {
    std::size_t m = 0;
    for (const auto& u : m_units)
        m = std::max(m, u.size);
    return m;
}

namespace {

// Fill n elements at flat offset `at` from the seeded stream, indexed by flat position so
// the value of an element never depends on who fills it.
void fill(float* flat, std::size_t at, std::size_t n, std::uint64_t stream, float scale) {
    fill_uniform(flat + at, n, stream, at, scale);
}

void fill_const(float* flat, std::size_t at, std::size_t n, float value) {
    std::fill(flat + at, flat + at + n, value);
}

} // namespace

void init_params(const model_config& cfg, const param_layout& layout, std::uint64_t seed,
                 float* flat) {
    const std::uint64_t stream = mix64(seed * 0x5851f42d4c957f2dull + 17);
    const auto h = static_cast<std::size_t>(cfg.hidden);
    const float w_h = 1.0f / std::sqrt(static_cast<float>(h));
    const auto q = static_cast<std::size_t>(cfg.qkv_width());
    const auto up = static_cast<std::size_t>(cfg.ffn_up());
    const auto f = static_cast<std::size_t>(cfg.ffn_width());
    const float w_f = 1.0f / std::sqrt(static_cast<float>(f));
    fill(flat, 0, layout.unit(0).size, stream, 1.0f);
    const block_offsets& b = layout.block();
    for (std::int64_t l = 0; l < cfg.layers; ++l) {
        const std::size_t base = layout.unit(static_cast<int>(l) + 1).offset;
        fill_const(flat, base, b.size, 0.0f); // biases
        fill_const(flat, base + b.norm1, h, 1.0f);
        fill_const(flat, base + b.norm2, h, 1.0f);
        fill(flat, base + b.wqkv, q * h, stream, w_h);
        fill(flat, base + b.wo, h * h, stream, w_h);
        fill(flat, base + b.w1, up * h, stream, w_h);
        fill(flat, base + b.w2, f * h, stream, w_f);
    }
    const head_offsets& hd = layout.head();
    const std::size_t base = layout.unit(layout.head_unit()).offset;
    fill_const(flat, base, hd.size, 0.0f);
    fill_const(flat, base + hd.norm, h, 1.0f);
    fill(flat, base + hd.wout, static_cast<std::size_t>(cfg.vocab) * h, stream, w_h);
}

namespace {
std::int64_t progression(std::uint64_t seed, std::int64_t vocab, std::int64_t seq,
                         std::int64_t pos) {
    const std::uint64_t key = mix64(seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(seq));
    const auto start = static_cast<std::int64_t>(key % static_cast<std::uint64_t>(vocab));
    const auto stride = static_cast<std::int64_t>((key >> 32) % 7) + 1;
    return (start + pos * stride) % vocab;
}
} // namespace

std::int32_t token_at(std::uint64_t seed, std::int64_t vocab, std::int64_t seq, std::int64_t pos) {
    return static_cast<std::int32_t>(progression(seed, vocab, seq, pos));
}

std::int32_t target_at(std::uint64_t seed, std::int64_t vocab, std::int64_t seq, std::int64_t pos) {
    return static_cast<std::int32_t>(progression(seed, vocab, seq, pos + 1));
}

} // namespace ringscale::kernels::model
