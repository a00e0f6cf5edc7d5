// train_step --numerics' budget against fp64 (jobs/numerics_budget.hpp) at np=1 and 2, as
// train_step stores it with the step-1 gradient error: correct bf16, fp16 and fp8 runs stay
// within half their dtype's budget (np=1; dp=2 and cp=2 ring at np=2), and a planted defect in
// the step's own GEMM (tests/support/planted_gemm_defect: bf16's accumulator rounded to bf16 at
// every 64-wide k-block boundary, in every run, references included), which the same-dtype
// reference and the floor share, is "beyond the dtype's budget against fp64" by twice it.
//
// The budget judges step 1's gradient (the one step every run takes from the same parameters),
// so a few steps suffice: 3, the validation's. The model: 1 block, hidden 64 (1 head of 64),
// vocab 32, 4 sequences of 16 tokens, and a wide FFN: the defect's error grows with the
// reduction's length K (u sqrt(K / (1024 ln 2)) relative, numerics_budget.hpp) where a correct
// run's does not, and the FFN gives that K to the MLP's down projection (forward) and the up
// projection's input gradient (the weight gradients sum over the 64 tokens: one block, exact in
// the defect). Correct runs at an FFN of 65536; the defect at 262144, where the estimate puts
// it at 4.1x the budget (at 65536 it measured 1.49x to 2.25x over 5 seeds: flagged, short of
// the 2x margin). fp8 runs the current recipe: the delayed one's first step quantises with
// scale 1 (no amax history yet), quoted by hand.
#include "analysis/comparisons/numerics.hpp"
#include "comm/communicator.hpp"
#include "jobs/numerics_budget.hpp"
#include "jobs/registry.hpp"
#include "kernels/executor.hpp"
#include "src/engine/run_loop.hpp"
#include "src/engine/sweep.hpp"
#include "tests/jobs/one_cpu_case.hpp"
#include "tests/support/planted_gemm_defect.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ringscale;

namespace {

struct config {
    const char* dp_variant;
    int cp;
    const char* cp_variant;
};

// The FFN widths: correct runs' and the defect's (above).
constexpr int correct_ffn = 65536, defect_ffn = 262144;

case_record run(const config& c, int ffn, int steps, const std::string& dtype, int seed,
                const std::string& recipe) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg;
    cfg.jobs = {"train_step"};
    for (const auto& o : jobs::find_job("train_step").options())
        cfg.params[o.name] = {o.default_value};
    cfg.params["layers"] = {"1"};
    cfg.params["hidden"] = {"64"}; // as the budget's model below
    cfg.params["heads"] = {"1"};
    cfg.params["ffn"] = {std::to_string(ffn)};
    cfg.params["vocab"] = {"32"};
    cfg.params["train-seq-len"] = {"16"};
    cfg.params["tokens"] = {"64"};
    cfg.params["lr"] = {"0.01"};
    cfg.params["dp-variant"] = {c.dp_variant};
    cfg.params["cp"] = {std::to_string(c.cp)};
    cfg.params["cp-variant"] = {c.cp_variant};
    cfg.params["dtype"] = {dtype};
    cfg.params["fp8-recipe"] = {recipe};
    cfg.params["data-seed"] = {std::to_string(seed)};
    cfg.params["numerics"] = {std::to_string(steps)};
    cfg.params["numerics-floor-runs"] = {"8"}; // the least: the budget does not read the floor
    return test_jobs::run_one_cpu_case(cfg, *world, 8ull << 30);
}

// Steps: the budget reads step 1; 3 is the least the validation allows (--steps-validate).
constexpr int ci_steps = 3;

int world_size() {
    return comm::make_world(comm_kind::mpi, comm::memory_space::host)->size();
}

// The configurations of this world size: np=1, or dp=2 and cp=2 ring at np=2.
std::vector<config> configs(int p) {
    if (p == 1)
        return {{"ddp", 1, "ring"}};
    return {{"ddp", 1, "ring"}, {"ddp", 2, "ring"}};
}

std::string name_of(const config& c, const std::string& dtype) {
    return dtype + " " + c.dp_variant + " cp=" + std::to_string(c.cp) + " " + c.cp_variant;
}

// The case's verdict at k = 2, printed on rank 0 with its largest ratio to the budget.
// A correct run also validates against the single-rank run; the defect's need not (its
// roundings follow where the cp ranks cut the reductions).
analysis::numerics_verdict judged(const config& c, int ffn, const std::string& dtype, int steps,
                                  int seed, const std::string& recipe = "current",
                                  bool planted = false) {
    const case_record rec = run(c, ffn, steps, dtype, seed, recipe);
    if (!planted) {
        EXPECT_EQ(std::get<std::string>(rec.flat().at("status")), "ok")
            << std::get<std::string>(rec.flat().at("error"));
    }
    if (rec.numerics.count("loss") != 1) {
        ADD_FAILURE() << "no series: " << std::get<std::string>(rec.flat().at("error"));
        analysis::numerics_verdict none;
        none.kind = analysis::numerics_kind::no_verdict;
        return none;
    }
    // The budget train_step stored is the formula's (fixed before any run, no measured
    // constant), at step 1 alone; fp8's delayed recipe has none (its step 1 runs unscaled).
    const analysis::numerics_data& n = rec.numerics;
    kernels::model::model_config m;
    m.layers = 1;
    m.hidden = 64;
    m.heads = 1;
    m.ffn = ffn;
    m.vocab = 32;
    const double budget =
        jobs::fp64_budget_of(m, kernels::model::parse_train_dtype(dtype)).grad_rel();
    const bool budgeted = !(dtype == "fp8" && recipe == "delayed");
    if (n.count("fp64_grad_rel_err") != 1 || n.at("fp64_grad_rel_err").empty()) {
        ADD_FAILURE() << "no step-1 gradient error stored";
        return analysis::judge_numerics(n, 2.0);
    }
    if (!budgeted) {
        EXPECT_EQ(n.count("fp64_budget_grad_rel"), 0u) << "a budget for the delayed recipe";
    } else if (n.count("fp64_budget_grad_rel") != 1 || n.at("fp64_budget_grad_rel").size() < 2) {
        ADD_FAILURE() << "no budget stored";
    } else {
        EXPECT_EQ(n.at("fp64_budget_grad_rel")[0], budget);
        EXPECT_EQ(n.at("fp64_budget_grad_rel")[1], 0.0); // step 1 alone
    }
    analysis::numerics_verdict v = analysis::judge_numerics(n, 2.0);
    // The ratio of step 1's error to the dtype's formula, read whatever the verdict (one that
    // comes before the budget's, a divergence against a floor of 8 runs, keeps no ratio; the
    // delayed recipe's is quoted).
    v.budget_ratio = n.at("fp64_grad_rel_err")[0] / budget;
    // Every rank makes the world (a collective MPI_Comm_dup); rank 0 prints.
    const auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    if (world->rank() == 0)
        std::printf("[budget] P=%d %s%s seed %d steps %d: ratio to the budget %.3g; %s\n",
                    world->size(), (name_of(c, dtype) + " ffn " + std::to_string(ffn)).c_str(),
                    dtype == "fp8" ? (" " + recipe).c_str() : "", seed, steps, v.budget_ratio,
                    v.text().c_str());
    return v;
}

} // namespace

TEST(train_numerics_budget_mpi, correct_runs_stay_within_the_dtype_budget) {
    for (const config& c : configs(world_size()))
        for (const char* dtype : {"bf16", "fp16", "fp8"}) {
            SCOPED_TRACE(name_of(c, dtype));
            const analysis::numerics_verdict v = judged(c, correct_ffn, dtype, ci_steps, 0);
            EXPECT_LE(v.budget_ratio, 0.5) << v.text(); // the 2x margin below the budget
            EXPECT_NE(v.kind, analysis::numerics_kind::beyond_budget) << v.text();
        }
}

TEST(train_numerics_budget_mpi, a_defect_every_run_shares_is_beyond_the_budget) {
    const test::planted_gemm_scope defect;
    const config c = configs(world_size()).back();
    const analysis::numerics_verdict v =
        judged(c, defect_ffn, "bf16", ci_steps, 0, "current", true);
    // Flagged at step 1 (within the first 50 steps), by the 2x margin above the budget.
    EXPECT_EQ(v.kind, analysis::numerics_kind::beyond_budget) << v.text();
    EXPECT_GE(v.budget_ratio, 2.0) << v.text();
    EXPECT_EQ(v.step, 1);
}

// By hand (RINGSCALE_NUMERICS_BUDGET_HAND=1): seeds 0..4, every dtype (fp8 in both recipes) at
// an FFN of RINGSCALE_NUMERICS_BUDGET_FFN (65536 unless set) and the defect at 262144, each
// case's ratio to the budget printed ([budget] lines), the 2x margins both ways checked (fp8's
// delayed recipe quoted, not held: MEASUREMENTS.md).
TEST(train_numerics_budget_mpi, by_hand_over_5_seeds) {
    if (!std::getenv("RINGSCALE_NUMERICS_BUDGET_HAND"))
        GTEST_SKIP() << "runs by hand (RINGSCALE_NUMERICS_BUDGET_HAND=1): beyond the CI budget";
    const char* width = std::getenv("RINGSCALE_NUMERICS_BUDGET_FFN");
    const int ffn = width ? std::atoi(width) : correct_ffn;
    for (int seed = 0; seed < 5; ++seed) {
        for (const config& c : configs(world_size())) {
            for (const char* dtype : {"bf16", "fp16", "fp8"})
                EXPECT_LE(judged(c, ffn, dtype, ci_steps, seed).budget_ratio, 0.5);
            judged(c, ffn, "fp8", ci_steps, seed, "delayed"); // quoted, not held to the budget
        }
        const test::planted_gemm_scope defect;
        for (const config& c : configs(world_size()))
            EXPECT_GE(judged(c, defect_ffn, "bf16", ci_steps, seed, "current", true).budget_ratio,
                      2.0);
    }
}
