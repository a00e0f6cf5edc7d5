#include "analysis/models/model.hpp"
#include "src/base/error.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale::analysis;

namespace {
const std::vector<double> ps = {2, 4, 8, 16, 32, 64};

std::vector<double> generate(double (*f)(double)) {
    std::vector<double> t;
    for (double p : ps)
        t.push_back(f(p));
    return t;
}
} // namespace

TEST(stats_model, hypothesis_set_size) {
    // constant + 19 exponents x 3 log powers - (0, 0) + 6 negative exponents x 2 log powers
    EXPECT_EQ(hypothesis_set().size(), 1u + 19 * 3 - 1 + 6 * 2);
}

TEST(stats_model, exact_fit_of_one_hypothesis) {
    const hypothesis log_only{0, 1, false, "0"};
    const model_fit f = fit_hypothesis(log_only, {1, 2, 4}, {1, 2, 3}); // t = 1 + log2 p
    EXPECT_NEAR(f.c0, 1.0, 1e-12);
    EXPECT_NEAR(f.c1, 1.0, 1e-12);
    EXPECT_NEAR(f.smape, 0.0, 1e-9);
    EXPECT_NEAR(f.r2, 1.0, 1e-12);
    EXPECT_EQ(f.formula(), "1.0000e+00 + 1.0000e+00 * log2(p)");
}

TEST(stats_model, loo_smape_of_constant_model) {
    // held-out predictions 2.5, 2, 1.5 for 1, 2, 3:
    // SMAPE = 100/3 * (2*1.5/3.5 + 0 + 2*1.5/4.5)
    const hypothesis constant{0, 0, true, "0"};
    EXPECT_NEAR(loo_smape(constant, {1, 2, 4}, {1, 2, 3}), 100.0 / 3 * (3 / 3.5 + 3 / 4.5), 1e-12);
}

TEST(stats_model, selects_p_log_p) {
    const auto t = generate([](double p) { return 2.0 + 0.5 * p * std::log2(p); });
    const model_fit f = select_model(ps, t);
    EXPECT_EQ(f.h.exponent_text, "1");
    EXPECT_EQ(f.h.log_power, 1);
    EXPECT_NEAR(f.c0, 2.0, 1e-9);
    EXPECT_NEAR(f.c1, 0.5, 1e-9);
    EXPECT_NEAR(f.cv_smape, 0.0, 1e-9);
    EXPECT_NEAR(f.eval(1024), 2.0 + 0.5 * 1024 * 10, 1e-6);
    EXPECT_EQ(f.formula(), "2.0000e+00 + 5.0000e-01 * p * log2(p)");
}

TEST(stats_model, selects_strong_scaling_inverse_p) {
    const auto t = generate([](double p) { return 0.5 + 8.0 / p; });
    const model_fit f = select_model(ps, t);
    EXPECT_EQ(f.h.exponent_text, "-1");
    EXPECT_EQ(f.h.log_power, 0);
    EXPECT_NEAR(f.c1, 8.0, 1e-9);
}

TEST(stats_model, selects_square_root) {
    const auto t = generate([](double p) { return 1.0 + 0.25 * std::sqrt(p); });
    const model_fit f = select_model(ps, t);
    EXPECT_EQ(f.h.exponent_text, "1/2");
    EXPECT_EQ(f.h.log_power, 0);
    EXPECT_NEAR(f.c0, 1.0, 1e-9);
}

TEST(stats_model, refuses_fewer_than_three_distinct_p) {
    EXPECT_THROW(select_model({2, 4, 4}, {1, 2, 2}), ringscale::config_error);
    try {
        select_model({2, 4}, {1, 2});
    } catch (const ringscale::config_error& e) {
        EXPECT_NE(std::string(e.what()).find("need at least 3"), std::string::npos);
    }
}

TEST(stats_model, prediction_band_collapses_without_noise) {
    std::vector<std::vector<double>> samples;
    std::vector<double> t;
    for (double p : ps) {
        t.push_back(2.0 + 0.5 * p * std::log2(p));
        samples.push_back(std::vector<double>(20, t.back()));
    }
    const model_fit f = select_model(ps, t);
    const auto pred = predict_with_band(ps, samples, f, {128, 1024}, 50, 3);
    ASSERT_EQ(pred.size(), 2u);
    EXPECT_NEAR(pred[1].value, 2.0 + 0.5 * 1024 * 10, 1e-6);
    EXPECT_NEAR(pred[1].lo, pred[1].value, 1e-6);
    EXPECT_NEAR(pred[1].hi, pred[1].value, 1e-6);
}

TEST(stats_model, prediction_band_widens_with_noise) {
    std::vector<std::vector<double>> samples;
    std::vector<double> t;
    for (double p : ps) {
        const double base = 2.0 + 0.5 * p * std::log2(p);
        samples.push_back({0.95 * base, base, 1.05 * base, 0.98 * base, 1.02 * base});
        t.push_back(base);
    }
    const model_fit f = select_model(ps, t);
    const auto pred = predict_with_band(ps, samples, f, {1024}, 200, 3);
    EXPECT_LT(pred[0].lo, pred[0].value);
    EXPECT_GT(pred[0].hi, pred[0].value);
}

namespace {
/// The hypothesis plain LOO SMAPE picks, without the plausibility constraints.
model_fit unconstrained(const std::vector<double>& p, const std::vector<double>& t) {
    model_fit best;
    double best_cv = 1e300;
    for (const hypothesis& h : hypothesis_set()) {
        const double cv = loo_smape(h, p, t);
        if (cv < best_cv - 1e-9) {
            best_cv = cv;
            best = fit_hypothesis(h, p, t);
        }
    }
    return best;
}
} // namespace

TEST(stats_model, plausibility_is_positivity_and_work_per_rank) {
    const hypothesis inv{-1, 0, false, "-1"}, log_only{0, 1, false, "0"};
    model_fit f = fit_hypothesis(inv, {1, 2, 4}, {9, 5, 3}); // 1 + 8/p
    EXPECT_TRUE(plausible(f, strong_elasticity));
    EXPECT_FALSE(plausible(f, weak_elasticity));   // falls although work per rank does not
    f = fit_hypothesis(inv, {1, 2, 4}, {7, 3, 1}); // -1 + 8/p: zero at p = 8
    EXPECT_FALSE(plausible(f, strong_elasticity));
    f = fit_hypothesis(log_only, {1, 2, 4}, {2, 1, 0.5}); // goes negative
    EXPECT_FALSE(plausible(f, strong_elasticity));
    f = fit_hypothesis(log_only, {1, 2, 4}, {1, 2, 3}); // 1 + log2 p
    EXPECT_TRUE(plausible(f, weak_elasticity));
}

TEST(stats_model, extrapolation_is_refused_beyond_the_span_of_the_data) {
    EXPECT_EQ(extrapolation_refusal({1, 2, 4}, 16), "");
    EXPECT_EQ(extrapolation_refusal({1, 2, 4}, 3), "");
    EXPECT_EQ(extrapolation_refusal({1, 2, 4}, 64),
              "not predicted: P=64 is 16x beyond the largest measured P; the data (P=1..4) "
              "supports extrapolation to P=16");
    EXPECT_EQ(extrapolation_refusal({8, 16, 32}, 0.5), "P=0.5 is below 1");
}

TEST(stats_model, three_point_study_never_predicts_a_negative_time) {
    // A train_step-like study at P = 1, 2, 4 flattening out: plain LOO selection picks
    // 10 - 0.5 log2(p)^2, which is -8 s at P=64.
    const std::vector<double> p = {1, 2, 4}, t = {10, 9.5, 8};
    ASSERT_LT(unconstrained(p, t).eval(64), 0) << unconstrained(p, t).formula();
    const model_fit f = select_model(p, t);
    EXPECT_TRUE(plausible(f, strong_elasticity)) << f.formula();
    const std::vector<std::vector<double>> samples = {
        {10.1, 9.9, 10.0, 10.2}, {9.4, 9.6, 9.5, 9.55}, {7.9, 8.1, 8.0, 8.05}};
    const auto pred = predict_with_band(p, samples, f, {8, 64, 1024}, 200, 1, 0.95);
    ASSERT_EQ(pred.size(), 3u);
    EXPECT_TRUE(pred[0].refusal.empty());
    EXPECT_GT(pred[0].value, 0);
    EXPECT_GT(pred[0].lo, 0);
    EXPECT_LE(pred[0].lo, pred[0].hi);
    for (std::size_t i : {1u, 2u}) {
        EXPECT_TRUE(std::isnan(pred[i].value));
        EXPECT_NE(pred[i].refusal.find("not predicted"), std::string::npos);
    }
}
