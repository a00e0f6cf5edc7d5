#include "kernels/model/mixed_precision.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <random>

namespace ringscale::kernels::model {

const char* train_dtype_name(train_dtype t) {
    switch (t) {
    case train_dtype::fp32:
        return "fp32";
    case train_dtype::bf16:
        return "bf16";
    case train_dtype::fp16:
        return "fp16";
    case train_dtype::fp8:
        return "fp8";
    }
    return "?";
}

train_dtype parse_train_dtype(const std::string& text) {
    if (text == "auto" || text == "fp32" || text == "float32")
        return train_dtype::fp32;
    if (text == "bf16" || text == "bfloat16")
        return train_dtype::bf16;
    if (text == "fp16" || text == "float16")
        return train_dtype::fp16;
    if (text == "fp8")
        return train_dtype::fp8;
    throw config_error(fmt::format("--dtype: '{}' is not fp32, bf16, fp16 or fp8", text));
}

std::string precision_config::describe() const {
    switch (dtype) {
    case train_dtype::fp16:
        return fmt::format("fp16 (static loss scale {:g})", loss_scale);
    case train_dtype::fp8:
        return scaling == fp8_scaling::delayed
                   ? fmt::format("fp8 (E4M3 activations and weights, E5M2 gradients, delayed "
                                 "per-tensor scaling, amax history {})",
                                 amax_history)
                   : std::string("fp8 (E4M3 activations and weights, E5M2 gradients, current "
                                 "per-tensor scaling)");
    default:
        return train_dtype_name(dtype);
    }
}

void mixed_precision::configure(const precision_config& cfg, std::int64_t layers) {
    if (cfg.amax_history < 1 || !(cfg.loss_scale > 0) || !std::isfinite(cfg.loss_scale))
        throw config_error("mixed precision: the amax history and the loss scale must be > 0");
    m_cfg = cfg;
    m_scales.configure(static_cast<std::size_t>(4 * layers + 1), cfg.scaling, cfg.amax_history);
    m_overflows = 0;
}

const float* mixed_precision::gemm_input(int site, gemm_operand op, const float* src,
                                         std::size_t n) {
    if (!active())
        return src;
    std::vector<float>& out = m_scratch[static_cast<int>(op)];
    out.resize(n);
    switch (m_cfg.dtype) {
    case train_dtype::bf16:
        for (std::size_t i = 0; i < n; ++i)
            out[i] = round_to_bf16(src[i]);
        break;
    case train_dtype::fp16: {
        const float s = op == gemm_operand::dy ? m_cfg.loss_scale : 1.0f;
        std::uint64_t inf = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const float r = round_to_f16(src[i] * s);
            inf += std::isinf(r) && std::isfinite(src[i]) ? 1 : 0;
            out[i] = r / s;
        }
        m_overflows += inf;
        break;
    }
    default: { // fp8
        float amax = 0;
        for (std::size_t i = 0; i < n; ++i)
            amax = std::max(amax, std::fabs(src[i]));
        const fp8_format f = fp8_format_of(op);
        const float s = fp8_scale(site, op, amax);
        for (std::size_t i = 0; i < n; ++i)
            out[i] = round_to_fp8(f, src[i] * s) / s;
    }
    }
    return out.data();
}

float mixed_precision::fp8_scale(int site, gemm_operand op, float amax) {
    // A weight is whole on every rank of the group (its amax already theirs): no exchange.
    if (m_cfg.scaling == fp8_scaling::current && m_amax_reduce && op != gemm_operand::w)
        amax = m_amax_reduce(amax);
    const std::size_t slot = m_scales.slot(site, op);
    m_scales.record(slot, amax);
    return m_scales.scale(slot, amax, fp8_format_of(op));
}

void mixed_precision::round_attention(float* v, std::size_t n) const {
    if (m_cfg.dtype == train_dtype::fp16)
        for (std::size_t i = 0; i < n; ++i)
            v[i] = round_to_f16(v[i]);
    else if (active())
        for (std::size_t i = 0; i < n; ++i)
            v[i] = round_to_bf16(v[i]);
}

std::vector<std::size_t> mixed_precision::row_order(std::size_t rows) {
    if (m_reorder_seed == 0)
        return {};
    std::vector<std::size_t> order(rows);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937_64 rng(m_reorder_seed * 0x9e3779b97f4a7c15ull + ++m_reorder_calls);
    for (std::size_t i = rows; i > 1; --i) // Fisher-Yates, portable (no std::shuffle)
        std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
    return order;
}

void mixed_precision::end_step(const std::function<void(float*, std::size_t)>& reduce) {
    if (m_cfg.dtype != train_dtype::fp8)
        return;
    m_scales.end_step(reduce);
}

float mixed_precision::delayed_scale(int site, gemm_operand op) const {
    return m_scales.scale(m_scales.slot(site, op), 0, fp8_format_of(op));
}

} // namespace ringscale::kernels::model
