// `ringscale-stats numerics INPUT...`: train_step --numerics cases, each configuration's loss,
// gradient norm and parameters against the single-rank run of the same dtype and the
// reduction-order floor, with a verdict, and the loss against the single-rank fp64 run
// (analysis/comparisons/numerics.hpp).
#include "option_ranges.hpp"
#include "shared.hpp"

#include "analysis/comparisons/numerics.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

// The costs the cases recorded, each summed over the cases that computed it (a reused
// reference or floor counts once).
std::string cost_line(const numerics_result& r) {
    double sum[4] = {0, 0, 0, 0};
    int count[4] = {0, 0, 0, 0};
    for (const numerics_case& c : r.cases) {
        const double v[4] = {c.fp64_s, c.ref_s, c.floor_s, c.run_s};
        for (int i = 0; i < 4; ++i)
            if (std::isfinite(v[i])) {
                sum[i] += v[i];
                ++count[i];
            }
    }
    const auto part = [&](int i, const char* what) {
        return count[i] ? fmt::format("{} {:.3g} s ({})", what, sum[i], count[i])
                        : fmt::format("{} not recorded", what);
    };
    return fmt::format("numerics: cost on rank 0 (cases that computed it): {}, {}, {}, {}",
                       part(0, "fp64 reference"), part(1, "same-dtype reference"),
                       part(2, "floor runs"), part(3, "followed runs"));
}

struct numerics_command final : input_command {
    const char* name() const override { return "numerics"; }
    const char* help() const override {
        return "train_step --numerics cases: per configuration the loss against the single-rank "
               "run of the same dtype (MAE, RMSE, max |delta|), the reduction-order floor, "
               "both against the single-rank fp64 run, "
               "growth with P, 95% intervals over seeds (--seeds), and a verdict: \"the same "
               "training\", or \"diverges at step s\" naming the first quantity (loss, "
               "grad_norm, params) past k x its floor. A non-finite value of the run is a "
               "divergence; "
               "one of the reference, no steps or a series missing give no verdict; a floor "
               "whose own parameter error passes 10% of the largest parameter, \"not "
               "decided\". A bf16, fp16 or fp8 case whose loss or gradient norm passes its "
               "dtype's budget against the fp64 run at some step (where the case carries one) is "
               "\"beyond the dtype's budget against fp64\": a defect the same-dtype reference "
               "and the floor share. Order: diverged > no verdict > beyond the dtype's budget "
               "against fp64 > not decided > the same training.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        d.add_options()("k", po::value<double>()->default_value(2.0)->notifier([this](double v) {
            m_k = in_range("k", v, error_factor);
        }),
                        "a quantity diverges past k times its floor (default 2)");
        declare_pool_resources(d, m_pool_resources);
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto pooled = pool_with_notes(rs, m_pool_resources);
        const numerics_result r = numerics_of(pooled, m_k);
        if (r.cases.empty())
            throw config_error("no case recorded numerics (run train_step with --numerics STEPS)");
        print_tables(out, m_common.format,
                     {{"numerics by case", numerics_case_table(r)},
                      {"numerics by configuration", numerics_config_table(r)}});
        note(fmt::format("numerics: k = {:g}; floor = the worst per step of single-rank runs "
                         "with reordered reductions, at least {:g} fp32 ulps of the reference",
                         m_k, numerics_ulp_floor / 0x1p-24));
        note("numerics: " + r.count_line());
        note(cost_line(r));
        return 0;
    }

    double m_k = 2.0;
};

} // namespace

RINGSCALE_STATS_FACTORY(numerics, numerics_command)

} // namespace ringscale::analysis
