#include "jobs/numerics_memory.hpp"

#include "kernels/model/reference_fp64.hpp"
#include "kernels/model/transformer.hpp"

#include <algorithm>

namespace ringscale::jobs {

namespace {

namespace model = kernels::model;

// The floor's reordered rows on its executor, for the whole batch: a GEMM's x, dx and dy rows
// and their order; an attention block's Q, dO, K, V rows (`input_bytes` a value: fp32 on the
// CPU, bf16 on a GPU) and fp32 O, dQ, dK, dV, LSE and delta rows (at most all of them).
double floor_rows_bytes(const train_problem& pr, double input_bytes) {
    const auto& m = pr.model;
    const double t = static_cast<double>(pr.sequences * pr.seq_len);
    const double h = static_cast<double>(m.hidden), kv = 2.0 * static_cast<double>(m.kv_width());
    const double in = std::max(h, static_cast<double>(m.ffn_width()));
    const double out = std::max({h, static_cast<double>(m.qkv_width()),
                                 static_cast<double>(m.ffn_up()), static_cast<double>(m.vocab)});
    return 4.0 * t * (2.0 * in + out) + 8.0 * t + input_bytes * t * (2.0 * h + kv) +
           4.0 * t * (2.0 * h + kv + 2.0 * static_cast<double>(m.heads));
}

} // namespace

double numerics_bytes(const train_problem& pr) {
    if (pr.numerics_steps <= 0)
        return 0;
    const double total = static_cast<double>(model::param_layout(pr.model).total());
    // The reference's parameters at every step, the run's gathered params, grads and last
    // params, a single-rank run's state (params, grads, AdamW moments) and its activations for
    // the largest micro-batch (the whole batch); the fp64 reference's parameters at every step
    // (doubles), its step-1 gradient, its own state and activations; the floor's rows (CPU).
    return 4.0 * total * (pr.numerics_steps + 7) + 8.0 * total +
           4.0 * static_cast<double>(
                     model::transformer::activation_floats(pr.model, {pr.sequences, pr.seq_len})) +
           8.0 * total * pr.numerics_steps + model::fp64_reference_bytes(pr.model, pr.seq_len) +
           floor_rows_bytes(pr, 4.0);
}

double numerics_device_bytes(const train_problem& pr) {
    if (pr.numerics_steps <= 0)
        return 0;
    const auto& m = pr.model;
    const double total = static_cast<double>(model::param_layout(m).total());
    const double t = static_cast<double>(pr.sequences * pr.seq_len); // the whole batch
    const double h = static_cast<double>(m.hidden), kv = 2.0 * static_cast<double>(m.kv_width());
    // The run's parameters, gradients and AdamW moments, its activations, the attention's
    // delta and per-row losses, its bf16 Q, K|V and dO, token ids and targets (as
    // device_bytes_per_rank's run), and the floor's reordered rows.
    const double activations =
        static_cast<double>(model::transformer::activation_floats(m, {pr.sequences, pr.seq_len}));
    return 4.0 * (4.0 * total + activations) + 4.0 * t * (static_cast<double>(m.heads) + 1) +
           2.0 * t * (2.0 * h + kv) + 8.0 * t + floor_rows_bytes(pr, 2.0);
}

} // namespace ringscale::jobs
