#include "jobs/numerics_budget.hpp"

#include <cmath>
#include <fmt/format.h>
#include <vector>

namespace ringscale::jobs {

namespace model = kernels::model;

fp64_budget fp64_budget_of(const model::model_config& m, model::train_dtype t) {
    fp64_budget b;
    b.u = t == model::train_dtype::bf16   ? 0x1p-8
          : t == model::train_dtype::fp16 ? 0x1p-11
          : t == model::train_dtype::fp8  ? 0x1p-3
                                          : 0.0;
    b.products = 2 * (6 * m.layers + 1) + 1;
    return b;
}

fp64_budget fp64_budget_of(const model::model_config& m, const model::precision_config& p) {
    fp64_budget b = fp64_budget_of(m, p.dtype);
    if (p.dtype == model::train_dtype::fp8 && p.scaling == model::fp8_scaling::delayed) {
        b.u = 0;
        b.why = "none: fp8's delayed recipe quantises step 1 with scale 1 (no amax history "
                "yet), where values underflow E4M3 beyond any rounding budget; the current recipe "
                "has one";
    }
    return b;
}

double fp64_budget::grad_rel() const {
    return u * std::sqrt(static_cast<double>(products) / std::log(2.0));
}

std::string fp64_budget::describe() const {
    if (!active())
        return why.empty() ? "none" : why;
    return fmt::format("step-1 gradient, worst tensor's ||g - g_fp64|| / ||g_fp64|| <= u sqrt(G / "
                       "ln 2) = {:.4g} with u = 2^{:g}, G = 2 (6L + 1) + 1 = {}",
                       grad_rel(), std::log2(u), products);
}

namespace {

// The tensors' [offset, offset + size) in the flat layout (params.hpp's order).
std::vector<std::pair<std::size_t, std::size_t>> tensors(const model::model_config& m) {
    const model::param_layout layout(m);
    std::vector<std::pair<std::size_t, std::size_t>> out;
    out.emplace_back(layout.unit(0).offset, layout.unit(0).size);
    const auto add_unit = [&](const model::param_unit& u, std::vector<std::size_t> starts) {
        starts.push_back(u.size);
        for (std::size_t i = 0; i + 1 < starts.size(); ++i)
            if (starts[i + 1] > starts[i])
                out.emplace_back(u.offset + starts[i], starts[i + 1] - starts[i]);
    };
    const auto& b = layout.block();
    for (int l = 1; l < layout.head_unit(); ++l)
        add_unit(layout.unit(l), {b.norm1, b.wqkv, b.wo, b.bo, b.norm2, b.w1, b.b1, b.w2, b.b2});
    const auto& h = layout.head();
    add_unit(layout.unit(layout.head_unit()), {h.norm, h.wout, h.bout});
    return out;
}

} // namespace

double grad_rel_err(const model::model_config& m, const float* g, const double* g64) {
    double worst = 0;
    for (const auto& [offset, size] : tensors(m)) {
        double diff = 0, norm = 0;
        for (std::size_t i = offset; i < offset + size; ++i) {
            const double d = static_cast<double>(g[i]) - g64[i];
            diff += d * d;
            norm += g64[i] * g64[i];
        }
        if (std::isnan(diff))
            return INFINITY;
        if (norm > 0)
            worst = std::max(worst, std::sqrt(diff / norm));
    }
    return worst;
}

} // namespace ringscale::jobs
