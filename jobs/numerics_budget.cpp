#include "jobs/numerics_budget.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::jobs {

namespace model = kernels::model;

fp64_budget fp64_budget_of(const model::model_config& m, model::train_dtype t,
                           std::int64_t tokens) {
    fp64_budget b;
    // fp16 is held to bf16's unit roundoff: below it the gap to fp64 stops shrinking
    // (measured: fp16's equals bf16's, the training's own noise; numerics_budget.hpp).
    b.u = t == model::train_dtype::bf16   ? 0x1p-8
          : t == model::train_dtype::fp16 ? 0x1p-8
          : t == model::train_dtype::fp8  ? 0x1p-3
                                          : 0.0;
    b.products = 6 * m.layers + 1;
    b.widest_k = std::max({m.hidden, m.ffn_width(), m.vocab, tokens});
    b.tokens = tokens;
    return b;
}

double fp64_budget::relative(int step) const {
    const double e = 2 * u + static_cast<double>(widest_k) * 0x1p-24;
    return e * std::sqrt(static_cast<double>(products)) *
           std::sqrt(static_cast<double>(std::max(step, 1)));
}

double fp64_budget::loss(double fp64_first_loss) const {
    return loss_factor * relative(1) * std::fabs(fp64_first_loss) /
           std::sqrt(static_cast<double>(tokens));
}

double fp64_budget::grad_norm(int step, double fp64_grad_norm) const {
    return relative(step) * std::fabs(fp64_grad_norm);
}

std::string fp64_budget::describe() const {
    return fmt::format("r(s) = (2u + K 2^-24) sqrt(G) sqrt(s) with u = 2^{:g}, K = {}, G = {}; "
                       "loss: {:g} r(1) |fp64_loss(1)| / sqrt(T) at every step, T = {}; "
                       "grad_norm: r(s) fp64_grad_norm(s)",
                       std::log2(u), widest_k, products, loss_factor, tokens);
}

} // namespace ringscale::jobs
