#include "jobs/train_validate.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::jobs {

namespace {

// Largest |a - b| (NaN counts as infinite) and the number of elements above `tol`.
std::pair<double, std::uint64_t> diff(const std::vector<float>& a, const std::vector<float>& b,
                                      double tol) {
    double worst = 0;
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
        if (!(e <= tol))
            ++wrong;
        worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
    if (a.size() != b.size())
        wrong += 1;
    return {worst, wrong};
}

} // namespace

validation compare_training(const training_trace& got, const training_trace& want, double lr,
                            attr_map& details) {
    return compare_training(got, want, lr, training_tolerance::cpu(), details);
}

validation compare_training(const training_trace& got, const training_trace& want, double lr,
                            const training_tolerance& tol, attr_map& details) {
    const auto steps = static_cast<double>(want.losses.size());
    double gmax = 0;
    for (float g : want.first_grads)
        gmax = std::max(gmax, static_cast<double>(std::fabs(g)));
    const double grad_tol = tol.grad_of_max * gmax, param_tol = tol.param_lr * lr * steps;
    const auto [grad_err, grad_wrong] = diff(got.first_grads, want.first_grads, grad_tol);
    const auto [param_err, param_wrong] = diff(got.params, want.params, param_tol);
    double loss_err = got.losses.size() == want.losses.size() ? 0 : INFINITY, loss_tol = 0;
    std::uint64_t loss_wrong = 0;
    for (std::size_t i = 0; i < std::min(got.losses.size(), want.losses.size()); ++i) {
        const double e = std::fabs(got.losses[i] - want.losses[i]);
        const double bound =
            tol.loss_rel *
            (tol.loss_of_first ? std::max(want.losses[i], want.losses[0]) : want.losses[i]);
        loss_err = std::max(loss_err, std::isnan(e) ? INFINITY : e);
        loss_tol = std::max(loss_tol, bound);
        loss_wrong += e <= bound ? 0 : 1;
    }
    details[schema::attr::validate_steps] = static_cast<std::int64_t>(want.losses.size());
    details[schema::attr::validate_grad_max_abs_err] = grad_err;
    details[schema::attr::validate_grad_tolerance] = grad_tol;
    details[schema::attr::validate_param_max_abs_err] = param_err;
    details[schema::attr::validate_param_tolerance] = param_tol;
    details[schema::attr::validate_loss_max_abs_err] = loss_err;
    details[schema::attr::validate_loss_tolerance] = loss_tol;
    const auto param_allowed =
        static_cast<std::uint64_t>(tol.param_outliers * static_cast<double>(want.params.size()));
    details[schema::attr::validate_param_outliers] = static_cast<std::int64_t>(param_wrong);
    details[schema::attr::validate_param_outliers_allowed] =
        static_cast<std::int64_t>(param_allowed);
    validation v;
    v.checked = true;
    v.max_abs_err = param_err;
    v.tolerance = param_tol;
    v.wrong = grad_wrong + param_wrong + loss_wrong;
    v.ok = grad_wrong == 0 && loss_wrong == 0 && param_wrong <= param_allowed &&
           std::isfinite(param_err) && got.params.size() == want.params.size();
    if (!v.ok)
        v.detail = fmt::format(
            "training differs from the single-rank run: step-1 gradient {} elements off (max "
            "{:.3g}, tol {:.3g}), parameters {} off ({} allowed; max {:.3g}, tol {:.3g}), {} "
            "losses off (max {:.3g})",
            grad_wrong, grad_err, grad_tol, param_wrong, param_allowed, param_err, param_tol,
            loss_wrong, loss_err);
    return v;
}

} // namespace ringscale::jobs
