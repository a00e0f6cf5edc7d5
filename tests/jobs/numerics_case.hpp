// The numerics tests' train_step case, on the CPU and on a GPU alike: the job's defaults with
// a tiny model (1 block of 2 heads of 64, vocab 32, 4 sequences of 16 tokens, several DDP
// buckets), one configuration of the dp x cp grid, `--numerics STEPS` in `dtype`.
#pragma once

#include "jobs/registry.hpp"
#include "src/engine/sweep.hpp"

#include <string>

namespace ringscale::test_jobs {

inline launch_config numerics_case(const std::string& dp_variant, int cp,
                                   const std::string& cp_variant, const std::string& dtype,
                                   int steps, int floor_runs) {
    launch_config cfg;
    cfg.jobs = {"train_step"};
    for (const auto& o : jobs::find_job("train_step").options())
        cfg.params[o.name] = {o.default_value};
    cfg.params["layers"] = {"1"};
    cfg.params["hidden"] = {"128"};
    cfg.params["heads"] = {"2"};
    cfg.params["vocab"] = {"32"};
    cfg.params["train-seq-len"] = {"16"};
    cfg.params["tokens"] = {"64"};
    cfg.params["lr"] = {"0.01"};
    cfg.params["bucket-mb"] = {"0.05"}; // several DDP buckets
    cfg.params["dp-variant"] = {dp_variant};
    cfg.params["cp"] = {std::to_string(cp)};
    cfg.params["cp-variant"] = {cp_variant};
    cfg.params["dtype"] = {dtype};
    cfg.params["numerics"] = {std::to_string(steps)};
    cfg.params["numerics-floor-runs"] = {std::to_string(floor_runs)};
    return cfg;
}

} // namespace ringscale::test_jobs
