#include "jobs/train_numerics.hpp"

#include "comm/communicator.hpp"
#include "jobs/numerics_budget.hpp"
#include "kernels/model/reference_fp64.hpp"
#include "kernels/model/reference_train.hpp"
#include "src/base/clock.hpp"
#include "src/base/error.hpp"
#include "src/base/numerics_schema.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <random>

namespace ringscale::jobs {

namespace {

namespace model = kernels::model;
using step_fn = std::function<void(int, double, const float*, const float*)>;

// Largest |a - b| over n values (NaN: infinite) and the largest |b|.
template <class T>
std::pair<double, double> max_diff(const float* a, const T* b, std::size_t n) {
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
    }
    return {worst, scale};
}

template <class T>
double l2_diff(const T* a, const T* b, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        s += d * d;
    }
    return std::sqrt(s);
}

// |a - b| with NaN as infinite (a non-finite loss is a divergence, not a gap in the data).
double gap(double a, double b) {
    const double e = std::fabs(a - b);
    return std::isnan(e) ? INFINITY : e;
}

// One single-rank run of pr's steps in pr's precision (a fresh context, so fp8's amax history
// starts empty), the sequences' gradients summed in `order` (empty: in order).
void single_rank(const train_problem& pr, std::uint64_t seed, const std::vector<float>& init,
                 kernels::executor& exec, const kernels::mask_view& mask,
                 std::vector<std::int64_t> order, std::int64_t micro_batch,
                 std::uint64_t reorder_seed, const step_fn& on_step) {
    model::train_context ctx(exec, pr.tf32);
    ctx.precision_state().configure(pr.precision, pr.model.layers);
    std::vector<float> p = init;
    model::reference_hooks hooks;
    hooks.order = std::move(order);
    hooks.micro_batch = micro_batch;
    hooks.reorder_seed = reorder_seed;
    hooks.on_step = on_step;
    model::reference_train_steps(pr.model, seed, pr.sequences, pr.seq_len, pr.numerics_steps,
                                 pr.dp_set.hp, p.data(), ctx, mask, hooks);
}

} // namespace

double l2_norm(const float* v, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i)
        s += static_cast<double>(v[i]) * v[i];
    return std::sqrt(s);
}

namespace {
double l2_norm64(const double* v, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i)
        s += v[i] * v[i];
    return std::sqrt(s);
}
} // namespace

std::vector<std::int64_t> reduction_order(std::uint64_t seed, int run, std::int64_t n) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(run) + 1);
    for (std::size_t i = order.size(); i > 1; --i) // Fisher-Yates, portable (no std::shuffle)
        std::swap(order[i - 1], order[static_cast<std::size_t>(rng() % i)]);
    return order;
}

std::int64_t floor_micro_batch(int run, std::int64_t sequences) {
    std::vector<std::int64_t> divisors;
    for (std::int64_t d = 1; d <= sequences; ++d)
        if (sequences % d == 0)
            divisors.push_back(d);
    return divisors[static_cast<std::size_t>(run) % divisors.size()];
}

namespace {

// The fp64 reference of one model and data (any dtype): its parameters at every step, its
// series (fp64_*) and its cost.
struct fp64_run {
    std::string key;
    std::vector<std::vector<double>> params;
    std::vector<double> first_grads; // step 1's gradient (the budget's quantity)
    numerics_series series;
    double seconds = 0;
};

// What every configuration of one model, data and dtype is compared with: the reference's
// parameters at every step and its series, the floor's series, their costs.
struct baseline {
    std::string key;
    std::vector<std::vector<float>> ref_params;
    numerics_series series; // ref_*, floor_* and fp64_*
    std::vector<float> first_grads;
    double ref_s = 0, floor_s = 0;
};

// Everything the fp64 reference depends on: the model, the data and the optimizer.
std::string fp64_key(const train_problem& pr, std::uint64_t seed) {
    const auto& m = pr.model;
    const auto& hp = pr.dp_set.hp;
    return fmt::format("{} {} {} {} {} {} {} {} {:a} {:a} {:a} {:a} {:a} {} {} {} {}", m.layers,
                       m.hidden, m.heads, m.vocab, pr.seq_len, pr.sequences, seed,
                       pr.numerics_steps, hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay,
                       pr.docs ? pr.docs->spec().docs : "", m.kv_count(), m.ffn_width(),
                       kernels::model::mlp_name(m.mlp));
}

// Everything the reference and the floor depend on (the ranks too: they split the floor): the
// fp64 reference's key, so a baseline that matches was computed with the fp64 run kept.
std::string baseline_key(const train_problem& pr, std::uint64_t seed, int ranks) {
    return fmt::format(
        "{} | {} {} {} {} {}", fp64_key(pr, seed), pr.floor_runs, pr.precision.describe(), pr.tf32,
        ranks, pr.precision.dtype == model::train_dtype::fp16 ? pr.precision.loss_scale : 0.0f);
}

// The fp64 reference (every rank runs it: each compares against it): its series and its
// parameters at every step.
void compute_fp64(const train_problem& pr, std::uint64_t seed, const std::vector<float>& init,
                  const kernels::mask_view& mask, fp64_run& b) {
    const std::size_t n = init.size();
    auto& s = b.series;
    for (const char* name : {"fp64_loss", "fp64_grad_norm", "fp64_update_norm"})
        s[name].assign(static_cast<std::size_t>(pr.numerics_steps), 0.0);
    b.params.assign(static_cast<std::size_t>(pr.numerics_steps), {});
    const double t0 = now_s();
    std::vector<double> prev(init.begin(), init.end());
    model::reference_train_fp64(pr.model, seed, pr.sequences, pr.seq_len, pr.numerics_steps,
                                pr.dp_set.hp, init.data(), mask,
                                [&](int k, double loss, const double* p, const double* g) {
                                    const auto i = static_cast<std::size_t>(k - 1);
                                    s["fp64_loss"][i] = loss;
                                    s["fp64_grad_norm"][i] = l2_norm64(g, n);
                                    s["fp64_update_norm"][i] = l2_diff(p, prev.data(), n);
                                    prev.assign(p, p + n);
                                    b.params[i] = prev;
                                    if (k == 1)
                                        b.first_grads.assign(g, g + n);
                                });
    b.seconds = now_s() - t0;
}

fp64_run& last_fp64() {
    static fp64_run r;
    return r;
}

// The fp64 reference of (pr, seed): computed, or the last one when its key matches (every
// dtype and configuration of one model and data shares it; one kept). Not collective.
const fp64_run& fp64_for(const train_problem& pr, std::uint64_t seed,
                         const std::vector<float>& init, const kernels::mask_view& mask) {
    fp64_run& last = last_fp64();
    const std::string key = fp64_key(pr, seed);
    if (last.key != key) {
        last = fp64_run{};
        compute_fp64(pr, seed, init, mask, last);
        last.key = key;
    }
    return last;
}

// The floor series, each the worst over the ranks' floor runs.
const char* const floor_series[] = {"floor_loss",           "floor_grad_norm",
                                    "floor_param_abs",      "floor_fp64_loss",
                                    "floor_fp64_grad_norm", "floor_fp64_param_abs"};

void compute_baseline(const train_problem& pr, std::uint64_t seed, const std::vector<float>& init,
                      kernels::executor& exec, const kernels::mask_view& mask,
                      comm::communicator& control, const fp64_run& f64, baseline& b) {
    const auto steps = static_cast<std::size_t>(pr.numerics_steps);
    const std::size_t n = init.size();
    auto& s = b.series;
    s = f64.series;
    for (const char* name : {"ref_loss", "ref_grad_norm", "ref_update_norm", "ref_param_fp64_abs"})
        s[name].assign(steps, 0.0);
    for (const char* name : floor_series)
        s[name].assign(steps, 0.0);
    // The reference: every rank runs it (each compares against it).
    b.ref_params.assign(steps, {});
    double t0 = now_s();
    std::vector<float> prev = init;
    single_rank(pr, seed, init, exec, mask, {}, pr.reference_micro_batch(), 0,
                [&](int k, double loss, const float* p, const float* g) {
                    const auto i = static_cast<std::size_t>(k - 1);
                    b.ref_params[i].assign(p, p + n);
                    s["ref_loss"][i] = loss;
                    s["ref_grad_norm"][i] = l2_norm(g, n);
                    s["ref_update_norm"][i] = l2_diff(p, prev.data(), n);
                    s["ref_param_fp64_abs"][i] = max_diff(p, f64.params[i].data(), n).first;
                    prev.assign(p, p + n);
                    if (k == 1)
                        b.first_grads.assign(g, g + n);
                });
    b.ref_s = now_s() - t0;
    // The floor: run r on rank r mod P, the worst over runs reduced over the ranks.
    t0 = now_s();
    for (int r = control.rank(); r < pr.floor_runs; r += control.size())
        single_rank(pr, seed, init, exec, mask, reduction_order(seed, r, pr.sequences),
                    floor_micro_batch(r, pr.sequences),
                    seed * 1000 + static_cast<std::uint64_t>(r) + 1,
                    [&](int k, double loss, const float* p, const float* g) {
                        const auto i = static_cast<std::size_t>(k - 1);
                        const double grad_norm = l2_norm(g, n);
                        // The worst so far of the floor runs' distances from one reference.
                        const auto widen = [&](const char* loss_key, const char* grad_key,
                                               const char* param_key, double ref_loss,
                                               double ref_grad_norm, const auto* ref_p) {
                            auto& fl = s[loss_key][i];
                            auto& fg = s[grad_key][i];
                            auto& fp = s[param_key][i];
                            fl = std::max(fl, gap(loss, ref_loss));
                            fg = std::max(fg, gap(grad_norm, ref_grad_norm));
                            fp = std::max(fp, max_diff(p, ref_p, n).first);
                        };
                        widen("floor_loss", "floor_grad_norm", "floor_param_abs", s["ref_loss"][i],
                              s["ref_grad_norm"][i], b.ref_params[i].data());
                        widen("floor_fp64_loss", "floor_fp64_grad_norm", "floor_fp64_param_abs",
                              s["fp64_loss"][i], s["fp64_grad_norm"][i], f64.params[i].data());
                    });
    b.floor_s = now_s() - t0;
    for (const char* name : floor_series) {
        std::vector<double> mine = s[name];
        control.allreduce(mine.data(), s[name].data(), steps, comm::dtype::f64,
                          comm::reduce_op::max);
    }
}

baseline& last_baseline() {
    static baseline b;
    return b;
}

// The baseline of (pr, seed) over `control`: computed, or the last one when its key matches
// (every configuration of a sweep over schemes shares it; one kept, its memory is steps x
// parameters). Collective when computed; every rank hits or misses alike (same key).
const baseline& baseline_for(const train_problem& pr, std::uint64_t seed,
                             const std::vector<float>& init, kernels::executor& exec,
                             const kernels::mask_view& mask, comm::communicator& control) {
    baseline& last = last_baseline();
    const std::string key = baseline_key(pr, seed, control.size());
    if (last.key != key) {
        last = baseline{};
        compute_baseline(pr, seed, init, exec, mask, control, fp64_for(pr, seed, init, mask), last);
        last.key = key;
    }
    return last;
}

} // namespace

numerics_result run_numerics(const train_problem& pr, std::uint64_t seed,
                             const std::vector<float>& init, kernels::executor& exec,
                             const kernels::mask_view& mask, comm::communicator& control,
                             const numerics_driver& driver) {
    const auto steps = static_cast<std::size_t>(pr.numerics_steps);
    const std::size_t n = init.size();
    const bool cached = baseline_key(pr, seed, control.size()) == last_baseline().key;
    const bool fp64_cached = fp64_key(pr, seed) == last_fp64().key;
    const baseline& b = baseline_for(pr, seed, init, exec, mask, control);
    const fp64_run& f64 = fp64_for(pr, seed, init, mask); // the baseline's: computed with it
    numerics_result out;
    out.series = b.series;
    auto& s = out.series;
    for (const char* name :
         {"loss", "grad_norm", "update_norm", "param_abs_err", "param_rel_err", "param_fp64_abs"})
        s[name].assign(steps, 0.0);
    out.want.first_grads = b.first_grads;
    out.want.params = b.ref_params[static_cast<std::size_t>(pr.steps_validate) - 1];
    out.want.losses.assign(s["ref_loss"].begin(), s["ref_loss"].begin() + pr.steps_validate);
    // The distributed run, from the same initial parameters.
    const double t0 = now_s();
    std::vector<float> grads(n), params(n), prev = init;
    for (std::size_t i = 0; i < steps; ++i) {
        s["loss"][i] = driver.step();
        driver.gather_grads(grads.data());
        driver.gather_params(params.data());
        s["grad_norm"][i] = l2_norm(grads.data(), n);
        s["update_norm"][i] = l2_diff(params.data(), prev.data(), n);
        const auto [abs_err, scale] = max_diff(params.data(), b.ref_params[i].data(), n);
        s["param_abs_err"][i] = abs_err;
        s["param_rel_err"][i] = scale > 0 ? abs_err / scale : abs_err;
        s["param_fp64_abs"][i] = max_diff(params.data(), f64.params[i].data(), n).first;
        prev = params;
        if (i == 0)
            out.got.first_grads = grads;
        if (static_cast<int>(i) < pr.steps_validate)
            out.got.losses.push_back(s["loss"][i]);
        if (static_cast<int>(i) + 1 == pr.steps_validate)
            out.got.params = params;
    }
    const double run_s = now_s() - t0;
    // Step 1's gradient against fp64, the one step every run takes from the same parameters,
    // and the precision's budget for it where it has one (numerics_budget.hpp): at step 1, 0
    // after.
    namespace attr = schema::attr;
    if (pr.precision.dtype != model::train_dtype::fp32 && steps > 0) {
        const fp64_budget budget = fp64_budget_of(pr.model, pr.precision);
        s["fp64_grad_rel_err"].assign(steps, 0.0);
        s["fp64_grad_rel_err"][0] =
            grad_rel_err(pr.model, out.got.first_grads.data(), f64.first_grads.data());
        if (budget.active()) {
            s["fp64_budget_grad_rel"].assign(steps, 0.0);
            s["fp64_budget_grad_rel"][0] = budget.grad_rel();
        }
        out.attrs[attr::numerics_fp64_budget] = budget.describe();
    }
    out.attrs[attr::numerics_steps] = static_cast<std::int64_t>(steps);
    out.attrs[attr::numerics_floor_runs] = static_cast<std::int64_t>(pr.floor_runs);
    out.attrs[attr::numerics_reference] =
        std::string("fp64: a single-rank fp64 run of the same steps (forward, backward and AdamW "
                    "in double from the same initial parameters, whole global batch; fp64_*); "
                    "the verdict's baseline: the single-rank run in the same dtype (") +
        pr.precision.describe() + "), whole global batch, fp32 master weights (ref_*)";
    out.attrs[attr::numerics_floor] =
        std::string("worst per step of the floor runs: single-rank, same dtype, the batch's "
                    "gradient sum in a seeded random order of its sequences, grouped in "
                    "micro-batches of 1, 2, ... sequences (each divisor of the batch in turn), "
                    "the attention's sums over keys and queries in 2 to 4 blocks at seeded "
                    "random cuts merged in a random order, each GEMM's weight gradient summed "
                    "over the tokens in a seeded random order");
    out.attrs[attr::numerics_reference_s] = b.ref_s;
    out.attrs[attr::numerics_floor_s] = b.floor_s;
    out.attrs[attr::numerics_fp64_s] = f64.seconds;
    out.attrs[attr::numerics_fp64_reused] = static_cast<std::int64_t>(fp64_cached ? 1 : 0);
    out.attrs[attr::numerics_run_s] = run_s;
    out.attrs[attr::numerics_baseline_reused] = static_cast<std::int64_t>(cached ? 1 : 0);
    return out;
}

} // namespace ringscale::jobs
