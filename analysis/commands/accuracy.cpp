// `ringscale-stats accuracy INPUT...`: each attention case's error against fp64, against P and
// S, and the cases past a tolerance (analysis/comparisons/accuracy.hpp).
#include "option_ranges.hpp"
#include "shared.hpp"

#include "analysis/comparisons/accuracy.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

struct accuracy_command final : input_command {
    const char* name() const override { return "accuracy"; }
    const char* help() const override {
        return "Each attention case's error against an fp64 reference on sampled rows "
               "(ringscale --accuracy): the max relative error of O, LSE, dQ, dK and dV by P, "
               "what distribution adds over the single-rank computation of the same rows, the "
               "growth per doubling of P and of S, and the cases whose error passes the dtype's "
               "own rounding (the single-rank error) by more than a tolerance (default: "
               "PyTorch's context-parallel tests' rtol, 1e-3 x P for bf16 and fp16, 1e-5 for "
               "fp32; and FlashAttention's tests' rule, at most 2x the single-rank error), or "
               "that overflowed (inf or NaN).";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        d.add_options()(
            "tolerance", po::value<double>()->notifier([this](double v) {
                m_tolerance.fixed = in_range("tolerance", v, relative_error);
            }),
            "flag a case where a tensor's max relative error passes its rounding (the "
            "single-rank error) by more than this, for every dtype and P (default: PyTorch's "
            "context-parallel tests' rtol, test/distributed/tensor/test_attention.py: 1e-3 x P "
            "for bf16 and fp16, 1e-5 for fp32; fp8 by its unit roundoff)")(
            "single-factor", po::value<double>()->default_value(2.0)->notifier([this](double v) {
                m_tolerance.single_factor = in_range("single-factor", v, error_factor);
            }),
            "flag a tensor whose distributed error passes this many times the single-rank "
            "computation's (FlashAttention's tests, tests/test_flash_attn.py: 2)");
        declare_pool_resources(d, m_pool_resources);
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto pooled = pool_with_notes(rs, m_pool_resources);
        const accuracy_result r = accuracy_of(pooled, m_tolerance);
        if (r.cases.empty())
            throw config_error("no case recorded its accuracy against fp64 (run the attention "
                               "jobs with ringscale --accuracy on)");
        print_tables(out, m_common.format,
                     {{"accuracy by case", accuracy_case_table(r)},
                      {"growth along P", accuracy_growth_table(r, "P")},
                      {"growth along S", accuracy_growth_table(r, "S")}});
        note("accuracy: " + r.tolerance.describe());
        note(fmt::format("accuracy: {} of {} cases flagged", r.flagged, r.cases.size()));
        return 0;
    }

    accuracy_tolerance m_tolerance;
};

} // namespace

RINGSCALE_STATS_FACTORY(accuracy, accuracy_command)

} // namespace ringscale::analysis
