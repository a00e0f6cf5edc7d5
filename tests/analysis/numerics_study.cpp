#include "tests/analysis/numerics_study.hpp"

#include "src/base/numerics_schema.hpp"

#include <cmath>
#include <map>

namespace ringscale::test_fixture {

namespace {

/// One case's series: within half the floor of the reference, or diverged as planted
/// (`jump_at`: 50 x the floor from that step; `nan_at`: a non-finite loss from that step).
std::map<std::string, std::vector<double>> series(int steps, double floor_step, int seed, int p,
                                                  int jump_at, int nan_at) {
    std::map<std::string, std::vector<double>> v;
    for (int step = 1; step <= steps; ++step) {
        const double ref = (5 + 0.1 * seed) * std::exp(-0.08 * step) + 0.05;
        const double floor = floor_step * step;
        double loss = ref + 0.5 * floor * p / 4.0;
        if (jump_at > 0 && step >= jump_at)
            loss = ref + 50 * floor;
        if (nan_at > 0 && step >= nan_at)
            loss = step == nan_at ? INFINITY : NAN;
        v["ref_loss"].push_back(ref);
        v["loss"].push_back(loss);
        v["ref_grad_norm"].push_back(1.0 / step);
        v["grad_norm"].push_back(1.0 / step);
        v["ref_update_norm"].push_back(1e-3);
        v["update_norm"].push_back(1e-3);
        v["param_abs_err"].push_back(0.25 * floor);
        v["param_rel_err"].push_back(0.25 * floor);
        v["floor_loss"].push_back(floor);
        v["floor_grad_norm"].push_back(floor);
        v["floor_param_abs"].push_back(floor);
        // The fp64 reference: the same-dtype reference within a quarter floor of it.
        v["fp64_loss"].push_back(ref - 0.25 * floor);
        v["fp64_grad_norm"].push_back(1.0 / step);
        v["fp64_update_norm"].push_back(1e-3);
        v["param_fp64_abs"].push_back(0.5 * floor);
        v["ref_param_fp64_abs"].push_back(0.25 * floor);
        v["floor_fp64_loss"].push_back(1.25 * floor);
        v["floor_fp64_grad_norm"].push_back(1.25 * floor);
        v["floor_fp64_param_abs"].push_back(1.25 * floor);
    }
    return v;
}

} // namespace

std::vector<fixture_case> numerics_cases(const numerics_study& s) {
    std::vector<fixture_case> out;
    for (std::size_t d = 0; d < s.dtypes.size(); ++d)
        for (const char* config : {"ddp/cp-ring", "zero1/cp-ulysses"})
            for (int p : {1, 2, 4})
                for (int seed : s.seeds) {
                    const bool last = d + 1 == s.dtypes.size(),
                               planted = p == 4 && seed == s.seeds.front();
                    const bool ring = std::string(config) == "ddp/cp-ring";
                    fixture_case c;
                    c.job = "train_step";
                    c.variant = s.variant.empty() ? config : s.variant;
                    c.world_size = p;
                    c.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"dtype", s.dtypes[d]}};
                    if (!s.variant.empty())
                        c.text_params.emplace_back("note", config);
                    c.int_params = {{"cp", p > 1 ? 2 : 1}, {"data_seed", seed}};
                    c.iterations = 3;
                    c.warmup = 0;
                    const auto v =
                        series(s.steps, s.dtypes[d] == "fp32" ? 1e-6 : 1e-3, seed, p,
                               last && planted && ring ? 15 : 0, last && planted && !ring ? 25 : 0);
                    for (const std::string& name : schema::numerics_datasets())
                        if (v.count(name)) // a budget against fp64 only where a study gives one
                            c.numerics.emplace_back(name, v.at(name));
                    c.seed = static_cast<std::uint64_t>(1000 * d + 100 * p + seed + (ring ? 0 : 7));
                    out.push_back(std::move(c));
                }
    return out;
}

} // namespace ringscale::test_fixture
