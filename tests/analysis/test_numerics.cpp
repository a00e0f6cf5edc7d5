// ringscale-stats numerics' rule (analysis/comparisons/numerics.hpp) on synthetic series with
// exact values: the same training; a divergence past k x the floor at its step, naming the
// quantity that moved first; a non-finite loss as a divergence; the floor's running max and its
// ulp floor; MAE, RMSE, max; the mean's 95% t interval over seeds.
#include "analysis/commands/command.hpp"
#include "analysis/comparisons/numerics.hpp"
#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"
#include "tests/analysis/stats_cli.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ringscale::analysis;
using ringscale::test_fixture::stats_json;

namespace {

// Four steps: the run equal to the reference, floors 1e-3 (loss, grad norm) and 1e-4 (params).
numerics_data same() {
    numerics_data d;
    d["ref_loss"] = d["loss"] = {3, 2, 1, 0.5};
    d["ref_grad_norm"] = d["grad_norm"] = {1, 1, 1, 1};
    d["param_abs_err"] = d["param_rel_err"] = {0, 0, 0, 0};
    d["floor_loss"] = d["floor_grad_norm"] = {1e-3, 1e-3, 1e-3, 1e-3};
    d["floor_param_abs"] = {1e-4, 1e-4, 1e-4, 1e-4};
    return d;
}

} // namespace

TEST(numerics, within_k_times_the_floor_is_the_same_training) {
    numerics_data d = same();
    d["loss"][1] += 1.9e-3; // 1.9 x the floor: within k = 2
    d["param_abs_err"] = {1.2e-4, 1.2e-4, 1.2e-4, 1.2e-4};
    d["param_rel_err"] = {1e-3, 1e-3, 1e-3, 1e-3};
    const numerics_verdict v = judge_numerics(d, 2.0);
    EXPECT_EQ(v.step, 0);
    EXPECT_EQ(v.text(), "the same training");
    EXPECT_EQ(judge_numerics(d, 1.5).text(), "diverges at step 2 (loss)");
}

TEST(numerics, the_first_quantity_past_its_floor_is_named) {
    numerics_data d = same();
    d["grad_norm"][2] = 1.1;     // step 3's gradient norm
    d["param_abs_err"][2] = 1.0; // and the parameters after it
    d["param_rel_err"][2] = 0.1;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 3 (grad_norm)");
    d["grad_norm"][2] = 1;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 3 (params)");
}

TEST(numerics, the_floor_is_its_running_max_and_at_least_16_ulps) {
    numerics_data d = same();
    d["floor_loss"] = {1e-2, 0, 0, 0}; // step 1's floor carries over
    d["loss"][3] += 1.5e-2;
    EXPECT_EQ(judge_numerics(d, 2.0).step, 0);
    d = same();
    d["floor_loss"] = {0, 0, 0, 0};
    d["loss"][0] += 3 * 16 * 0x1p-24; // the ulp floor of 3 itself: within 2 x it
    EXPECT_EQ(judge_numerics(d, 2.0).step, 0);
    d["loss"][0] += 3 * 32 * 0x1p-24;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 1 (loss)");
}

TEST(numerics, a_non_finite_loss_is_a_divergence) {
    numerics_data d = same();
    d["loss"][1] = NAN;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverged at step 2: loss nan");
    d = same();
    d.erase("floor_loss");
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "no verdict (series missing)");
}

TEST(numerics, overflow_is_never_the_same_training) {
    // The loss and its reference both +inf: the run diverged, whatever the reference did.
    numerics_data d = same();
    d["loss"][1] = d["ref_loss"][1] = INFINITY;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverged at step 2: loss +inf");
    EXPECT_EQ(judge_numerics(d, 2.0).kind, numerics_kind::diverged);
    // Only the reference: nothing to judge against from there on.
    d = same();
    d["ref_loss"][1] = INFINITY;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "reference diverged at step 2: no verdict");
    EXPECT_EQ(judge_numerics(d, 2.0).kind, numerics_kind::no_verdict);
    // ... unless the run itself overflows later: diverged comes first.
    d["grad_norm"][3] = -INFINITY;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverged at step 4: grad_norm -inf");
    // The parameter error infinite at every step.
    d = same();
    d["param_abs_err"] = d["param_rel_err"] = {INFINITY, INFINITY, INFINITY, INFINITY};
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverged at step 1: params +inf");
    // A floor run that overflowed neither widens the band to infinity nor decides.
    d = same();
    d["floor_loss"][0] = INFINITY;
    d["loss"][2] += 1;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 3 (loss)");
    d["loss"][2] -= 1;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "not decided (the floor diverges as much)");
    // No steps at all.
    d = same();
    for (auto& [name, v] : d)
        v.clear();
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "no verdict (no steps)");
}

TEST(numerics, a_floor_that_diverges_as_much_decides_nothing) {
    // --lr 0.9 in fp16: the run's parameters 101% off the reference, its floor's as much.
    numerics_data d = same();
    d["param_abs_err"] = {0.5, 0.8, 1.0, 1.01};
    d["param_rel_err"] = {0.5, 0.8, 1.0, 1.01}; // the largest parameter is 1
    d["floor_param_abs"] = {0.5, 0.8, 1.0, 1.0};
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "not decided (the floor diverges as much)");
    // A floor at 9% of the largest parameter still decides; at 11% it does not.
    d["param_abs_err"] = d["param_rel_err"] = d["floor_param_abs"] = {0.09, 0.09, 0.09, 0.09};
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "the same training");
    d["floor_param_abs"][3] = d["param_abs_err"][3] = d["param_rel_err"][3] = 0.11;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "not decided (the floor diverges as much)");
    // But a divergence past k x even that floor is one.
    d["param_abs_err"][3] = d["param_rel_err"][3] = 0.5;
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "diverges at step 4 (params)");
}

namespace {

// same() with an fp64 reference 0.01 off the run and budgets of 0.02 (loss) and 0.1 (grad norm).
numerics_data with_budget() {
    numerics_data d = same();
    d["fp64_loss"] = {3.01, 2.01, 1.01, 0.51};
    d["fp64_grad_norm"] = {1, 1, 1, 1};
    d["fp64_budget_loss"] = {0.02, 0.02, 0.02, 0.02};
    d["fp64_budget_grad_norm"] = {0.1, 0.1, 0.1, 0.1};
    return d;
}

} // namespace

TEST(numerics, past_the_dtype_budget_against_fp64_is_flagged) {
    numerics_data d = with_budget();
    numerics_verdict v = judge_numerics(d, 2.0);
    EXPECT_EQ(v.text(), "the same training");
    EXPECT_DOUBLE_EQ(v.budget_ratio, 0.5); // 0.01 of 0.02, the largest ratio
    d["fp64_loss"][2] = 1.03;              // 0.03: 1.5 x the budget at step 3
    d["fp64_grad_norm"][1] = 1.25;         // 2.5 x at step 2: the first step past it
    v = judge_numerics(d, 2.0);
    EXPECT_EQ(v.kind, numerics_kind::beyond_budget);
    EXPECT_EQ(v.text(), "beyond the dtype's budget against fp64 at step 2 (grad_norm, 2.5x)");
    EXPECT_DOUBLE_EQ(v.budget_ratio, 2.5);
    // A divergence against the floor ranks above it, no verdict too; not decided below it.
    numerics_data diverging = d;
    diverging["loss"][3] += 1;
    EXPECT_EQ(judge_numerics(diverging, 2.0).text(), "diverges at step 4 (loss)");
    numerics_data no_ref = d;
    no_ref["ref_loss"][3] = NAN;
    EXPECT_EQ(judge_numerics(no_ref, 2.0).kind, numerics_kind::no_verdict);
    numerics_data chaos = d;
    chaos["floor_loss"][0] = INFINITY;
    EXPECT_EQ(judge_numerics(chaos, 2.0).kind, numerics_kind::beyond_budget);
    chaos["fp64_loss"][2] = 1.01;
    chaos["fp64_grad_norm"][1] = 1;
    EXPECT_EQ(judge_numerics(chaos, 2.0).text(), "not decided (the floor diverges as much)");
}

TEST(numerics, a_case_without_a_usable_budget_is_judged_as_before) {
    numerics_data d = with_budget();
    d["fp64_loss"][2] = 5; // far off fp64, but no budget to judge it by:
    numerics_data none = d;
    none.erase("fp64_budget_loss"); // fp32, or a file written before the budget
    EXPECT_EQ(judge_numerics(none, 2.0).text(), "the same training");
    EXPECT_TRUE(std::isnan(judge_numerics(none, 2.0).budget_ratio));
    numerics_data damaged = d; // a budget that is not a finite value >= 0
    damaged["fp64_budget_grad_norm"][0] = NAN;
    EXPECT_EQ(judge_numerics(damaged, 2.0).text(), "the same training");
    damaged["fp64_budget_grad_norm"][0] = -1;
    EXPECT_EQ(judge_numerics(damaged, 2.0).text(), "the same training");
    numerics_data short_series = d; // not one value per step
    short_series["fp64_budget_loss"].pop_back();
    EXPECT_EQ(judge_numerics(short_series, 2.0).text(), "the same training");
    // A non-finite gap to fp64 (the fp64 reference overflowed) is past any budget.
    d["fp64_loss"][2] = INFINITY;
    EXPECT_EQ(judge_numerics(d, 2.0).text(),
              "beyond the dtype's budget against fp64 at step 3 (loss, infx)");
    // A zero budget with a zero gap passes.
    numerics_data zero = with_budget();
    zero["fp64_loss"] = zero["loss"];
    zero["fp64_budget_loss"] = {0, 0, 0, 0};
    EXPECT_EQ(judge_numerics(zero, 2.0).text(), "the same training");
}

TEST(numerics, step_one_gradient_past_its_budget_is_flagged) {
    numerics_data d = same(); // no loss or grad-norm budget: the gradient's alone is judged
    d["fp64_grad_rel_err"] = {0.005, 0, 0, 0};
    d["fp64_budget_grad_rel"] = {0.01, 0, 0, 0};
    numerics_verdict v = judge_numerics(d, 2.0);
    EXPECT_EQ(v.text(), "the same training");
    EXPECT_DOUBLE_EQ(v.budget_ratio, 0.5);
    d["fp64_grad_rel_err"][0] = 0.025;
    v = judge_numerics(d, 2.0);
    EXPECT_EQ(v.text(), "beyond the dtype's budget against fp64 at step 1 (step-1 gradient, 2.5x)");
    d["fp64_budget_grad_rel"].pop_back(); // not one value per step: no budget to judge by
    EXPECT_EQ(judge_numerics(d, 2.0).text(), "the same training");
}

TEST(numerics, one_order_for_every_verdict) {
    numerics_verdict same_v, undecided, beyond, none, diverged_late, diverged_early;
    undecided.kind = numerics_kind::not_decided;
    beyond.kind = numerics_kind::beyond_budget;
    none.kind = numerics_kind::no_verdict;
    none.quantity = "no steps";
    diverged_late.kind = diverged_early.kind = numerics_kind::diverged;
    diverged_late.step = 9;
    diverged_early.step = 3;
    EXPECT_EQ(&worse(same_v, undecided), &undecided);
    EXPECT_EQ(&worse(undecided, beyond), &beyond);
    EXPECT_EQ(&worse(beyond, none), &none);
    EXPECT_EQ(&worse(none, undecided), &none);
    EXPECT_EQ(&worse(none, diverged_late), &diverged_late);
    EXPECT_EQ(&worse(diverged_late, diverged_early), &diverged_early);
    EXPECT_EQ(&worse(diverged_early, diverged_late), &diverged_early);
}

TEST(numerics, loss_divergence_summary_and_interval_over_seeds) {
    const divergence_summary s = summarize({1, 2, 3, 4}, {1, 1, 1, 1});
    EXPECT_DOUBLE_EQ(s.mae, 1.5);             // (0 + 1 + 2 + 3) / 4
    EXPECT_DOUBLE_EQ(s.rmse, std::sqrt(3.5)); // (0 + 1 + 4 + 9) / 4
    EXPECT_DOUBLE_EQ(s.max, 3);
    EXPECT_TRUE(std::isinf(summarize({NAN}, {1}).max));
    const mean_ci m = mean_with_ci({1, 2, 3}); // sd 1, se 1/sqrt(3), t(2) = 4.303
    EXPECT_DOUBLE_EQ(m.mean, 2);
    EXPECT_NEAR(m.lo, 2 - 4.303 / std::sqrt(3.0), 1e-12);
    EXPECT_NEAR(m.hi, 2 + 4.303 / std::sqrt(3.0), 1e-12);
    const mean_ci one = mean_with_ci({5});
    EXPECT_EQ(one.lo, 5);
}

namespace {

// A train_step case at P with `seed`, its series from same(); `diverge_at` > 0 plants a loss
// jump there (to NaN when `nan`).
ringscale::test_fixture::fixture_case fixture_numerics(int p, int seed, int diverge_at = 0,
                                                       bool nan = false) {
    ringscale::test_fixture::fixture_case c;
    c.job = "train_step";
    c.variant = "ddp/cp-ring";
    c.world_size = p;
    c.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"dtype", "bf16"}};
    c.int_params = {{"cp", 2}, {"data_seed", seed}};
    c.iterations = 1;
    c.warmup = 0;
    numerics_data d = same();
    for (auto& v : d["loss"]) // a run-to-run spread within the floor
        v += 1e-4 * seed * p;
    if (diverge_at > 0)
        d["loss"][static_cast<std::size_t>(diverge_at - 1)] = nan ? NAN : 10;
    for (auto& [name, v] : d)
        c.numerics.emplace_back(name, v);
    d["update_norm"] = d["ref_update_norm"] = {1, 1, 1, 1};
    c.numerics.emplace_back("update_norm", d["update_norm"]);
    c.numerics.emplace_back("ref_update_norm", d["ref_update_norm"]);
    c.seed = static_cast<std::uint64_t>(p * 100 + seed);
    return c;
}

} // namespace

TEST(numerics, the_command_judges_each_case_and_pools_the_seeds) {
    const std::string dir = ringscale::test_fixture::fixture_dir("numerics");
    ringscale::test_fixture::fixture_file f;
    for (int p : {2, 4})
        for (int seed : {0, 1, 2})
            f.cases.push_back(fixture_numerics(p, seed, p == 4 && seed == 2 ? 3 : 0, true));
    ringscale::test_fixture::write_fixture_file(dir + "/numerics.h5", f);
    const auto j = stats_json({"numerics", dir, "--format", "json"});
    const auto& cases = j.at("numerics by case");
    ASSERT_EQ(cases.size(), 6u) << j.dump(1);
    EXPECT_EQ(cases[0].at("verdict"), "the same training");
    EXPECT_EQ(cases[5].at("verdict"), "diverged at step 3: loss nan") << j.dump(1);
    const auto& configs = j.at("numerics by configuration");
    ASSERT_EQ(configs.size(), 2u) << j.dump(1);
    EXPECT_EQ(configs[0].at("p"), 2);
    EXPECT_EQ(configs[0].at("diverged"), "0/3");
    EXPECT_NEAR(configs[0].at("loss_max_mean").get<double>(), 2e-4, 1e-12); // seeds 0, 1, 2
    EXPECT_EQ(configs[1].at("diverged"), "1/3");
    EXPECT_EQ(configs[1].at("first"), "diverged at step 3: loss nan");
}

TEST(numerics, a_case_without_a_verdict_is_not_pooled_as_the_same_training) {
    const std::string dir = ringscale::test_fixture::fixture_dir("numerics_no_verdict");
    ringscale::test_fixture::fixture_file f;
    for (int seed : {0, 1}) {
        ringscale::test_fixture::fixture_case c = fixture_numerics(2, seed);
        if (seed == 1) // its series are missing
            c.numerics.erase(std::remove_if(c.numerics.begin(), c.numerics.end(),
                                            [](const auto& s) { return s.first == "floor_loss"; }),
                             c.numerics.end());
        f.cases.push_back(c);
    }
    ringscale::test_fixture::write_fixture_file(dir + "/numerics.h5", f);
    const auto j = stats_json({"numerics", dir, "--format", "json"});
    const auto& configs = j.at("numerics by configuration");
    ASSERT_EQ(configs.size(), 1u) << j.dump(1);
    EXPECT_EQ(configs[0].at("first"), "no verdict (series missing)") << j.dump(1);
    EXPECT_EQ(configs[0].at("diverged"), "0/2");
}

TEST(numerics, no_numerics_case_is_one_line) {
    const std::string dir = ringscale::test_fixture::fixture_dir("numerics_none");
    ringscale::test_fixture::fixture_file f;
    f.cases.push_back(ringscale::test_fixture::fixture_case{});
    ringscale::test_fixture::write_fixture_file(dir + "/plain.h5", f);
    std::vector<const char*> argv = {"ringscale-stats", "numerics", dir.c_str()};
    std::ostringstream out;
    try {
        run_command(parse_cli(3, argv.data()), out);
        ADD_FAILURE() << "no error";
    } catch (const ringscale::error& e) {
        EXPECT_NE(std::string(e.what()).find("--numerics"), std::string::npos) << e.what();
    }
}

TEST(numerics, the_fp64_divergence_is_shown_where_the_file_has_it) {
    const std::string dir = ringscale::test_fixture::fixture_dir("numerics_fp64");
    ringscale::test_fixture::fixture_file f;
    f.cases.push_back(fixture_numerics(2, 0)); // before the fp64 reference: no fp64 series
    ringscale::test_fixture::fixture_case c = fixture_numerics(2, 1);
    c.numerics.emplace_back("fp64_loss", std::vector<double>{3, 2, 1, 0.5});
    c.numerics.emplace_back("floor_fp64_loss", std::vector<double>{1e-3, 4e-3, 2e-3, 1e-3});
    f.cases.push_back(c);
    ringscale::test_fixture::write_fixture_file(dir + "/numerics.h5", f);
    const auto j = stats_json({"numerics", dir, "--format", "json"});
    const auto& cases = j.at("numerics by case");
    ASSERT_EQ(cases.size(), 2u) << j.dump(1);
    EXPECT_TRUE(cases[0].at("fp64_loss_max").is_null()) << j.dump(1);
    EXPECT_EQ(cases[0].at("verdict"), "the same training"); // older files judge unchanged
    // Seed 1 at P = 2: every loss 2e-4 above the reference, which equals fp64 here.
    EXPECT_NEAR(cases[1].at("fp64_loss_mae").get<double>(), 2e-4, 1e-12);
    EXPECT_NEAR(cases[1].at("fp64_loss_max").get<double>(), 2e-4, 1e-12);
    EXPECT_NEAR(cases[1].at("floor_fp64_loss_max").get<double>(), 4e-3, 1e-12);
    EXPECT_EQ(cases[1].at("verdict"), "the same training");
}

TEST(numerics, costs_are_taken_from_the_cases_that_computed_them) {
    const std::string dir = ringscale::test_fixture::fixture_dir("numerics_costs");
    ringscale::test_fixture::fixture_file f;
    for (int seed : {0, 1}) {
        ringscale::test_fixture::fixture_case c = fixture_numerics(2, seed);
        const double reused = seed; // seed 1 reuses seed 0's references and floor
        c.outcome_params = {{"numerics_fp64_s", 4.0},      {"numerics_fp64_reused", reused},
                            {"numerics_reference_s", 2.0}, {"numerics_baseline_reused", reused},
                            {"numerics_floor_s", 60.0},    {"numerics_run_s", 2.5 + seed}};
        f.cases.push_back(c);
    }
    ringscale::test_fixture::write_fixture_file(dir + "/numerics.h5", f);
    const result_set rs = load_results({dir}, false);
    const auto pooled = pool_cases(rs.cases);
    const numerics_result r = numerics_of(pooled, 2.0);
    ASSERT_EQ(r.cases.size(), 2u);
    EXPECT_EQ(r.cases[0].fp64_s, 4.0);
    EXPECT_EQ(r.cases[0].ref_s, 2.0);
    EXPECT_EQ(r.cases[0].floor_s, 60.0);
    EXPECT_TRUE(std::isnan(r.cases[1].fp64_s)); // counted once, where computed
    EXPECT_TRUE(std::isnan(r.cases[1].floor_s));
    EXPECT_EQ(r.cases[1].run_s, 3.5);
}

TEST(numerics, a_case_beyond_its_budget_is_stored_and_shown) {
    const std::string dir = ringscale::test_fixture::fixture_dir("numerics_budget");
    ringscale::test_fixture::fixture_file f;
    for (int seed : {0, 1}) {
        ringscale::test_fixture::fixture_case c = fixture_numerics(2, seed);
        // fp64 0.01 below the loss; budgets 0.02 (seed 0: within, 0.5x) and 0.004 (2.5x).
        c.numerics.emplace_back("fp64_loss", std::vector<double>{2.99, 1.99, 0.99, 0.49});
        c.numerics.emplace_back("fp64_grad_norm", std::vector<double>{1, 1, 1, 1});
        const double b = seed == 0 ? 0.02 : 0.004;
        c.numerics.emplace_back("fp64_budget_loss", std::vector<double>{b, b, b, b});
        c.numerics.emplace_back("fp64_budget_grad_norm", std::vector<double>{1, 1, 1, 1});
        f.cases.push_back(c);
    }
    ringscale::test_fixture::write_fixture_file(dir + "/numerics.h5", f);
    const auto j = stats_json({"numerics", dir, "--format", "json"});
    const auto& cases = j.at("numerics by case");
    ASSERT_EQ(cases.size(), 2u) << j.dump(1);
    EXPECT_NEAR(cases[0].at("fp64_budget_ratio").get<double>(), 0.5, 1e-9) << j.dump(1);
    EXPECT_EQ(cases[0].at("verdict"), "the same training");
    EXPECT_NEAR(cases[1].at("fp64_budget_ratio").get<double>(), 2.55, 1e-9) << j.dump(1);
    EXPECT_EQ(cases[1].at("verdict"),
              "beyond the dtype's budget against fp64 at step 1 (loss, 2.55x)");
    // Pooled over the seeds, the verdict that wins is the budget's.
    const auto& configs = j.at("numerics by configuration");
    ASSERT_EQ(configs.size(), 1u) << j.dump(1);
    EXPECT_EQ(configs[0].at("first"),
              "beyond the dtype's budget against fp64 at step 1 (loss, 2.55x)");
}
