#include "analysis/model.hpp"
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
