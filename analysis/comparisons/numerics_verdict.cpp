#include "analysis/comparisons/numerics_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <utility>

namespace ringscale::analysis {

namespace {

const std::vector<double>* series(const numerics_data& d, const char* name) {
    const auto it = d.find(name);
    return it == d.end() ? nullptr : &it->second;
}

std::string signed_value(double v) {
    return std::isnan(v) ? "nan" : v > 0 ? "+inf" : "-inf";
}

numerics_verdict no_verdict(const char* why, int step = 0, bool reference = false) {
    numerics_verdict v;
    v.kind = numerics_kind::no_verdict;
    v.quantity = why;
    v.step = step;
    v.reference = reference;
    return v;
}

numerics_verdict diverged(int step, const char* quantity, bool non_finite, double value) {
    numerics_verdict v;
    v.kind = numerics_kind::diverged;
    v.step = step;
    v.quantity = quantity;
    v.non_finite = non_finite;
    v.value = value;
    return v;
}

using named = std::pair<const char*, const std::vector<double>*>;

/// The series the verdict reads, all of one length.
struct judged {
    const std::vector<double>*loss, *ref_loss, *gn, *ref_gn, *perr, *prel, *fl, *fg, *fp;
};

/// Running maxima of the floor (only its finite values: a floor run that overflowed says
/// the floor diverges, and makes no quantity's allowance infinite), and whether its parameter
/// error reached a tenth of the largest parameter.
struct envelope {
    double loss = 0, grad = 0, params = 0, scale_p = 0;
    bool chaos = false;
    void add(const judged& j, std::size_t i) {
        const auto grow = [this](double& env, double f) {
            if (std::isfinite(f))
                env = std::max(env, f);
            else
                chaos = true;
        };
        grow(loss, (*j.fl)[i]);
        grow(grad, (*j.fg)[i]);
        grow(params, (*j.fp)[i]);
        if ((*j.prel)[i] > 0)
            scale_p = (*j.perr)[i] / (*j.prel)[i];
        chaos = chaos || (scale_p > 0 && params > numerics_floor_chaos * scale_p);
    }
};

} // namespace

std::string numerics_verdict::text() const {
    switch (kind) {
    case numerics_kind::diverged:
        return non_finite
                   ? fmt::format("diverged at step {}: {} {}", step, quantity, signed_value(value))
                   : fmt::format("diverges at step {} ({})", step, quantity);
    case numerics_kind::no_verdict:
        return reference ? fmt::format("reference diverged at step {}: no verdict", step)
                         : fmt::format("no verdict ({})", quantity);
    case numerics_kind::beyond_budget:
        return fmt::format("beyond the dtype's budget against fp64 at step {} ({}, {:.3g}x)", step,
                           quantity, value);
    case numerics_kind::not_decided:
        return "not decided (the floor diverges as much)";
    case numerics_kind::same:
        break;
    }
    return "the same training";
}

const numerics_verdict& worse(const numerics_verdict& a, const numerics_verdict& b) {
    if (a.kind != b.kind)
        return a.kind > b.kind ? a : b;
    return b.step > 0 && (a.step == 0 || b.step < a.step) ? b : a;
}

namespace {

// One budgeted quantity: its gap to fp64 per step and its budget per step.
struct budgeted {
    const char* name;
    std::vector<double> gaps;
    const std::vector<double>* budget;
};

// Whether `b` is a budget of `steps` finite values >= 0 (a damaged file leaves none to judge by).
bool usable(const std::vector<double>* b, std::size_t steps) {
    return b && b->size() == steps &&
           std::all_of(b->begin(), b->end(), [](double v) { return std::isfinite(v) && v >= 0; });
}

// The quantities a case carries a usable budget for: the loss and the gradient norm against
// the fp64 reference's (both budgets or neither), and the step-1 gradient's relative error
// (fp64_grad_rel_err, already a gap).
std::vector<budgeted> budgeted_quantities(const numerics_data& d, std::size_t steps) {
    std::vector<budgeted> out;
    const auto gaps = [&](const char* run, const char* fp64) {
        const auto* a = series(d, run);
        const auto* b = series(d, fp64);
        std::vector<double> g;
        if (a && b && a->size() == steps && b->size() == steps)
            for (std::size_t i = 0; i < steps; ++i)
                g.push_back(std::fabs((*a)[i] - (*b)[i]));
        return g;
    };
    const auto* bl = series(d, "fp64_budget_loss");
    const auto* bg = series(d, "fp64_budget_grad_norm");
    auto loss = gaps("loss", "fp64_loss");
    auto gn = gaps("grad_norm", "fp64_grad_norm");
    if (usable(bl, steps) && usable(bg, steps) && loss.size() == steps && gn.size() == steps) {
        out.push_back({"loss", std::move(loss), bl});
        out.push_back({"grad_norm", std::move(gn), bg});
    }
    const auto* rel = series(d, "fp64_grad_rel_err");
    const auto* br = series(d, "fp64_budget_grad_rel");
    if (usable(br, steps) && rel && rel->size() == steps) {
        std::vector<double> g;
        for (double v : *rel)
            g.push_back(std::fabs(v));
        out.push_back({"step-1 gradient", std::move(g), br});
    }
    return out;
}

} // namespace

budget_check check_fp64_budget(const numerics_data& d) {
    budget_check out;
    const auto* loss = series(d, "loss");
    if (!loss)
        return out;
    const std::vector<budgeted> qs = budgeted_quantities(d, loss->size());
    if (qs.empty())
        return out;
    out.max_ratio = 0;
    for (std::size_t i = 0; i < loss->size(); ++i)
        for (const budgeted& q : qs) {
            const double gap = q.gaps[i];
            const double budget = (*q.budget)[i];
            const double ratio = !std::isfinite(gap) ? INFINITY
                                 : budget > 0        ? gap / budget
                                 : gap > 0           ? INFINITY
                                                     : 0;
            out.max_ratio = std::max(out.max_ratio, ratio);
            if (out.first_step == 0 && !(ratio <= 1)) {
                out.first_step = static_cast<int>(i) + 1;
                out.quantity = q.name;
                out.first_ratio = ratio;
            }
        }
    return out;
}

numerics_verdict judge_numerics(const numerics_data& d, double k) {
    const judged j{
        series(d, "loss"),          series(d, "ref_loss"),        series(d, "grad_norm"),
        series(d, "ref_grad_norm"), series(d, "param_abs_err"),   series(d, "param_rel_err"),
        series(d, "floor_loss"),    series(d, "floor_grad_norm"), series(d, "floor_param_abs")};
    for (const auto* s : {j.loss, j.ref_loss, j.gn, j.ref_gn, j.perr, j.prel, j.fl, j.fg, j.fp})
        if (!s || s->size() != j.loss->size())
            return no_verdict("series missing");
    if (j.loss->empty())
        return no_verdict("no steps");
    // The run's own first non-finite value: a verdict of its own, whatever its reference did
    // (at the same step or before it).
    std::optional<numerics_verdict> own;
    for (std::size_t i = 0; i < j.loss->size() && !own; ++i)
        for (const named& q : {named{"loss", j.loss}, named{"grad_norm", j.gn}})
            if (!own && !std::isfinite((*q.second)[i]))
                own = diverged(static_cast<int>(i) + 1, q.first, true, (*q.second)[i]);
    envelope env;
    for (std::size_t i = 0; i < j.loss->size(); ++i) {
        const int step = static_cast<int>(i) + 1;
        if (own && own->step == step)
            return *own;
        if (!std::isfinite((*j.ref_loss)[i]) || !std::isfinite((*j.ref_gn)[i]))
            return own ? *own : no_verdict("reference diverged", step, true);
        if (!std::isfinite((*j.perr)[i]) || !std::isfinite((*j.prel)[i]))
            return diverged(step, "params", true,
                            std::isfinite((*j.perr)[i]) ? (*j.prel)[i] : (*j.perr)[i]);
        env.add(j, i);
        const double allowed[] = {
            k * std::max(env.loss, numerics_ulp_floor * std::fabs((*j.ref_loss)[i])),
            k * std::max(env.grad, numerics_ulp_floor * std::fabs((*j.ref_gn)[i])),
            k * std::max(env.params, numerics_ulp_floor * env.scale_p)};
        const double gap[] = {std::fabs((*j.loss)[i] - (*j.ref_loss)[i]),
                              std::fabs((*j.gn)[i] - (*j.ref_gn)[i]), (*j.perr)[i]};
        const char* names[] = {"loss", "grad_norm", "params"};
        for (int q = 0; q < 3; ++q)
            if (!(gap[q] <= allowed[q]))
                return diverged(step, names[q], false, gap[q]);
    }
    numerics_verdict v;
    const budget_check b = check_fp64_budget(d);
    v.budget_ratio = b.max_ratio;
    if (b.first_step > 0) {
        v.kind = numerics_kind::beyond_budget;
        v.step = b.first_step;
        v.quantity = b.quantity;
        v.value = b.first_ratio;
    } else if (env.chaos) {
        v.kind = numerics_kind::not_decided;
    }
    return v;
}

} // namespace ringscale::analysis
