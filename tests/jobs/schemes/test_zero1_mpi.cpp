// ZeRO-1 (jobs/schemes/zero1.cpp) called as the training step calls it, at np = 1, 2, 4, with
// buckets that cut units: after each step the parameters equal AdamW on the summed gradient,
// element for element (integer gradients, so every sum is exact whatever its order), however
// they are read while the all-gathers posted by finish_step may still be in flight: through
// gather_params, and unit by unit through params(); gather_grads gives the sum. A load() after
// a step restores the initial parameters (the restart before validation). DDP, ZeRO-1 and FSDP
// on host memory move their collectives before every dense GEMM (train_context's progress
// hook): steps with GEMMs between the units are still exact, and the hook goes with the scheme.
#include "comm/communicator.hpp"
#include "jobs/schemes/data_parallel.hpp"
#include "kernels/model/train_context.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace ringscale;
namespace schemes = ringscale::jobs::schemes;
namespace model = ringscale::kernels::model;

namespace {

model::model_config tiny() {
    model::model_config c;
    c.layers = 3;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 37; // unit offsets that are not multiples of P
    return c;
}

// Rank r's local gradient of step s at flat element i: a small integer.
float local_grad(int rank, int step, std::size_t i) {
    return static_cast<float>(static_cast<int>((i * 5 + static_cast<std::size_t>(rank) * 11 +
                                                static_cast<std::size_t>(step) * 3) %
                                               19) -
                              9);
}

struct zero1_run {
    explicit zero1_run(comm::communicator& c, const char* variant = "zero1")
        : group(c), layout(tiny()), full(layout.total()), want(layout.total()),
          m(layout.total(), 0.0f), v(layout.total(), 0.0f) {
        for (std::size_t i = 0; i < full.size(); ++i)
            full[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
        want = full;
        schemes::dp_settings s;
        s.variant = variant;
        s.bucket_bytes = 0.7 * 4.0 * static_cast<double>(layout.block().size); // cuts units
        dp = schemes::make_dp_strategy(s, c, layout, model::default_cpu_context());
        dp->load(full.data());
        hp = s.hp;
    }

    // One step as train_step runs it (no forward needed here), and the same step on one
    // rank: AdamW on the sum of every rank's gradient.
    // `gemms`: dense GEMMs after each unit's backward, as the model's next unit runs them.
    void step(int s, int gemms = 0) {
        dp->begin_step(timer);
        for (int u = layout.units() - 1; u >= 0; --u) {
            const auto& unit = layout.unit(u);
            float* g = dp->grads(u);
            for (std::size_t j = 0; j < unit.size; ++j)
                g[j] += local_grad(group.rank(), s, unit.offset + j);
            dp->done(u, true, timer);
            for (int k = 0; k < gemms; ++k)
                gemm();
        }
        dp->finish_step(s, timer);
        std::vector<float> sum(layout.total(), 0.0f);
        for (int r = 0; r < group.size(); ++r)
            for (std::size_t i = 0; i < sum.size(); ++i)
                sum[i] += local_grad(r, s, i);
        model::optimizer_step(model::default_cpu_context(), hp, s, sum.size(), want.data(),
                              sum.data(), m.data(), v.data());
        summed = sum;
    }

    static void gemm() {
        const kernels::linear_shape shape{2, 8, 8};
        const std::vector<float> x(16, 0.5f), w(64, 0.25f);
        std::vector<float> y(16);
        model::default_cpu_context().gemm_fwd(0, shape, x.data(), w.data(), nullptr, y.data());
    }

    comm::communicator& group;
    model::param_layout layout;
    std::vector<float> full, want, m, v, summed;
    kernels::adamw_params hp;
    std::unique_ptr<schemes::dp_strategy> dp;
    phase_timer timer;
};

} // namespace

TEST(zero1, gather_params_right_after_a_step_is_the_updated_model_and_its_gradient) {
    auto c = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    zero1_run run(*c);
    for (int s = 1; s <= 2; ++s) {
        run.step(s);
        std::vector<float> got(run.layout.total());
        run.dp->gather_params(got.data());
        EXPECT_EQ(got, run.want) << "step " << s;
        run.dp->gather_grads(got.data());
        EXPECT_EQ(got, run.summed) << "step " << s;
    }
}

// params(u) waits for the buckets covering unit u: in the forward's order with done() testing
// the rest between units, and head first with nothing in between (the bucket posted last read
// first, so a missing wait reads the parameters of the step before).
TEST(zero1, params_of_a_unit_after_a_step_are_updated_in_any_order) {
    auto c = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    zero1_run run(*c);
    for (int s = 1; s <= 4; ++s) {
        run.step(s);
        const bool forward = s % 2 == 1;
        const int n = run.layout.units();
        for (int k = 0; k < n; ++k) {
            const int u = forward ? k : n - 1 - k;
            const auto& unit = run.layout.unit(u);
            const float* p = run.dp->params(u, false, run.timer);
            const std::vector<float> got(p, p + unit.size);
            const auto at = run.want.begin() + static_cast<std::ptrdiff_t>(unit.offset);
            EXPECT_EQ(got, std::vector<float>(at, at + static_cast<std::ptrdiff_t>(unit.size)))
                << "step " << s << ", unit " << u;
            if (forward)
                run.dp->done(u, false, run.timer);
        }
    }
}

TEST(zero1, load_after_a_step_restores_the_initial_parameters) {
    auto c = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    zero1_run run(*c);
    run.step(1);
    run.dp->load(run.full.data()); // the gathers of step 1 may be in flight
    std::vector<float> got(run.layout.total());
    run.dp->gather_params(got.data());
    EXPECT_EQ(got, run.full);
}

class host_progress : public ::testing::TestWithParam<const char*> {};

TEST_P(host_progress, collectives_move_before_every_gemm_and_the_steps_stay_exact) {
    auto c = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    {
        zero1_run run(*c, GetParam());
        EXPECT_TRUE(model::default_cpu_context().has_progress());
        for (int s = 1; s <= 3; ++s) {
            run.step(s, 3);
            std::vector<float> got(run.layout.total());
            run.dp->gather_params(got.data());
            EXPECT_EQ(got, run.want) << "step " << s;
            run.dp->gather_grads(got.data());
            EXPECT_EQ(got, run.summed) << "step " << s;
        }
    }
    EXPECT_FALSE(model::default_cpu_context().has_progress()) << "left behind by the scheme";
}

INSTANTIATE_TEST_SUITE_P(schemes, host_progress, ::testing::Values("ddp", "zero1", "fsdp"));
