// What the attention jobs report about a case for people to read (attention_common.hpp): its
// problem, its rates, the validation's error and, with --accuracy on, the error against fp64.
#include "jobs/attention_common.hpp"

#include "src/base/results_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringscale::jobs {

std::vector<metric> attention_shape_metrics(const case_plan& plan) {
    const attention_problem pr = read_attention_problem(plan.values);
    std::vector<metric> out = {
        metric::of("seq", static_cast<double>(pr.seq_len), "", metric_hint::size),
        metric::of_text("H/Hkv", fmt::format("{}/{}", pr.heads, pr.kv_heads)),
        metric::of("D", static_cast<double>(pr.head_dim), "", metric_hint::count),
        metric::of_text("causal", pr.causal ? "yes" : "no"),
        metric::of_text("pass", plan.values.text("pass")),
        metric::of_text("layout", plan.values.text("layout")),
        metric::of_text("mask", read_mask_spec(plan.values).label())};
    // --accuracy on: what the error depends on besides the shape (one row per dtype, merge
    // and input kind would otherwise read alike).
    if (plan.show_accuracy)
        for (const char* key : {"dtype", "merge", "inputs"})
            out.push_back(metric::of_text(key, plan.values.has(key) ? plan.values.text(key) : "-"));
    return out;
}

std::vector<metric> attention_rate_metrics(const case_plan& plan, const results::case_record& rec) {
    namespace attr = schema::attr;
    constexpr double none = std::numeric_limits<double>::quiet_NaN();
    const double t = rec.median_step_s();
    const double ranks = std::max(rec.world, 1);
    const double flops = rec.number(attr::flops_per_iter).value_or(none);
    const double tokens = rec.number(attr::tokens_per_iter).value_or(none);
    const bool checked = rec.number(attr::validated).value_or(0) != 0;
    // With a mask: the compute it saves (dense / masked FLOPs) and the rate a dense kernel
    // would need to match this time (dense-equivalent GF/s per rank); "-" without one.
    const double reduction = rec.number(attr::compute_reduction).value_or(none);
    const double dense = rec.number(attr::dense_flops_per_iter).value_or(none);
    std::vector<metric> out = {
        metric::of("", t > 0 ? tokens / t : none, "tok/s", metric_hint::rate),
        metric::of("", t > 0 ? flops / t / ranks / 1e9 : none, "GF/s/rank", metric_hint::rate),
        metric::of("dense-eq", t > 0 ? dense / t / ranks / 1e9 : none, "GF/s", metric_hint::rate),
        metric::of("reduce", reduction, "x", metric_hint::number),
        metric::of("work-imbal", rec.number(attr::work_imbalance).value_or(none), "",
                   metric_hint::number),
        metric::of("max_err", checked ? rec.number(attr::max_abs_err).value_or(0) : none, "",
                   metric_hint::error)};
    if (plan.show_accuracy) { // --accuracy on: the worst relative error against fp64 beside it
        double worst = none;
        for (const char* t : schema::acc_tensors)
            if (const auto e = rec.number(schema::acc_attr("", t, "max_rel")))
                worst = std::isnan(worst) ? *e : std::max(worst, *e);
        out.push_back(metric::of("fp64_rel", worst, "", metric_hint::error));
    }
    return out;
}

} // namespace ringscale::jobs
