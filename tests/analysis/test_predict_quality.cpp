// How good the calibrated figures are (issue 36): the collectives' alpha/beta fit says how far
// it is from the sizes it was fitted on, and a busbw collapse past some size (planted: 6 GB/s
// up to 4 MiB, 0.1 GB/s from 16 MiB, as issue 36 saw at 8-32 MiB) is modelled as a second
// regime with both busbw given back, never averaged into one beta.
#include "analysis/predict/calibrate.hpp"
#include "analysis/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale::analysis;
using namespace ringscale::analysis::predict;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

const double alpha = 20e-6;

/// An allreduce on 2 ranks of one node (intra) of `bytes`, at busbw `beta` (bytes/s).
fixture_case allreduce(std::int64_t bytes, double beta) {
    fixture_case f;
    f.job = "collectives";
    f.variant = "allreduce";
    f.world_size = 2;
    f.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"op", "allreduce"}, {"scope", "world"}};
    f.int_params = {{"requested_bytes", bytes}};
    f.float_params = {{"bytes", static_cast<double>(bytes)}};
    f.base_time_s = 2 * alpha + bytes * 1.0 / beta; // 2(g-1) steps, busbw factor 1 at g = 2
    f.noise = 0.01;
    f.seed = static_cast<std::uint64_t>(bytes);
    return f;
}

calibration calibrate(const char* name, bool collapse) {
    const std::string dir = ringscale::test_fixture::fixture_dir(name);
    fixture_file file;
    for (std::int64_t bytes = 64 << 10; bytes <= (64 << 20); bytes *= 4)
        file.cases.push_back(allreduce(bytes, collapse && bytes >= (16 << 20) ? 0.1e9 : 6e9));
    write_fixture_file(dir + "/links.h5", file);
    const calibration_set set = gather_calibration(pool_cases(load_results({dir}, true).cases));
    std::vector<double> cy, ly;
    observation_medians(set, cy, ly);
    return fit_calibration(set, cy, ly);
}

} // namespace

TEST(analysis_predict_quality, one_regime_fits_and_says_how_well) {
    const calibration cal = calibrate("predict_quality_one", false);
    const link_figures lf = cal.per_op[0].at(coll::allreduce);
    EXPECT_FALSE(lf.two_regimes());
    EXPECT_NEAR(lf.beta_bps / 6e9, 1, 0.05);
    const fit_quality q = cal.per_op_quality[0].at(coll::allreduce);
    EXPECT_EQ(q.sizes, 6);
    EXPECT_EQ(q.min_bytes, 64 << 10);
    EXPECT_EQ(q.max_bytes, 64 << 20);
    EXPECT_LT(q.max_abs, 0.05);
    EXPECT_TRUE(std::isnan(q.one_regime_max_abs));
}

TEST(analysis_predict_quality, a_busbw_collapse_is_a_second_regime) {
    const calibration cal = calibrate("predict_quality_collapse", true);
    const link_figures lf = cal.per_op[0].at(coll::allreduce);
    ASSERT_TRUE(lf.two_regimes());
    EXPECT_NEAR(lf.regime_bytes, 8 << 20, 1); // between the sizes 4 MiB and 16 MiB
    EXPECT_NEAR(lf.at(1 << 20).beta_bps / 6e9, 1, 0.05);
    EXPECT_NEAR(lf.at(32 << 20).beta_bps / 0.1e9, 1, 0.05);
    const fit_quality q = cal.per_op_quality[0].at(coll::allreduce);
    EXPECT_GT(q.one_regime_max_abs, std::log(2.0)); // one beta was more than 2x off ...
    EXPECT_LT(q.max_abs, 0.05);                     // ... two fit every size
    // A 32 MiB allreduce is priced at the collapsed busbw, a 1 MiB one at the fast one.
    const figures f = cal.for_device("none");
    EXPECT_NEAR(coll_cost(coll::allreduce, 32 << 20, 2, link_level::intra, f).total() /
                    (2 * alpha + (32 << 20) / 0.1e9),
                1, 0.05);
    EXPECT_NEAR(coll_cost(coll::allreduce, 1 << 20, 2, link_level::intra, f).total() /
                    (2 * alpha + (1 << 20) / 6e9),
                1, 0.05);
}
