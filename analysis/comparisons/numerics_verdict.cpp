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

budget_check check_fp64_budget(const numerics_data& d) {
    budget_check out;
    const auto* loss = series(d, "loss");
    const auto* gn = series(d, "grad_norm");
    const auto* loss64 = series(d, "fp64_loss");
    const auto* gn64 = series(d, "fp64_grad_norm");
    const auto* bl = series(d, "fp64_budget_loss");
    const auto* bg = series(d, "fp64_budget_grad_norm");
    for (const auto* s : {loss, gn, loss64, gn64, bl, bg})
        if (!s || s->size() != loss->size())
            return out;
    // A budget that is not a finite value >= 0 (a damaged file) leaves no budget to judge by.
    for (const auto* s : {bl, bg})
        for (double v : *s)
            if (!(std::isfinite(v) && v >= 0))
                return out;
    out.max_ratio = 0;
    for (std::size_t i = 0; i < loss->size(); ++i) {
        const named quantities[] = {{"loss", bl}, {"grad_norm", bg}};
        const double gaps[] = {std::fabs((*loss)[i] - (*loss64)[i]),
                               std::fabs((*gn)[i] - (*gn64)[i])};
        for (int q = 0; q < 2; ++q) {
            const double budget = (*quantities[q].second)[i];
            const double ratio = !std::isfinite(gaps[q]) ? INFINITY
                                 : budget > 0            ? gaps[q] / budget
                                 : gaps[q] > 0           ? INFINITY
                                                         : 0;
            out.max_ratio = std::max(out.max_ratio, ratio);
            if (out.first_step == 0 && !(ratio <= 1)) {
                out.first_step = static_cast<int>(i) + 1;
                out.quantity = quantities[q].first;
                out.first_ratio = ratio;
            }
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
