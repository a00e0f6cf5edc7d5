// What train_step --numerics adds to a rank's memory (jobs/numerics_memory): nothing without it;
// on a GPU one single-rank run at a time (state, whole-batch activations, the floor's reordered
// rows) whatever the number of steps; on the host both references' parameters at every step.
#include "jobs/numerics_memory.hpp"
#include "kernels/model/reference_fp64.hpp"
#include "kernels/model/transformer.hpp"

#include <gtest/gtest.h>

using namespace ringscale;

namespace {

jobs::train_problem problem() {
    jobs::train_problem pr;
    pr.model.layers = 2;
    pr.model.hidden = 256;
    pr.model.heads = 4;
    pr.model.vocab = 4096; // the logits GEMM is the widest: its rows dominate the floor's
    pr.seq_len = 128;
    pr.sequences = 4;
    pr.numerics_steps = 20;
    return pr;
}

double params(const jobs::train_problem& pr) {
    return static_cast<double>(kernels::model::param_layout(pr.model).total());
}

// A single-rank run's parameters, gradients and AdamW moments and its whole-batch activations.
double one_run(const jobs::train_problem& pr) {
    return 16.0 * params(pr) +
           4.0 * static_cast<double>(kernels::model::transformer::activation_floats(
                     pr.model, {pr.sequences, pr.seq_len}));
}

} // namespace

TEST(numerics_memory, nothing_without_numerics) {
    auto pr = problem();
    pr.numerics_steps = 0;
    EXPECT_EQ(jobs::numerics_bytes(pr), 0.0);
    EXPECT_EQ(jobs::numerics_device_bytes(pr), 0.0);
}

TEST(numerics_memory, a_gpu_holds_one_run_and_the_floors_rows_whatever_the_steps) {
    auto pr = problem();
    const double t = static_cast<double>(pr.sequences * pr.seq_len);
    const double dev = jobs::numerics_device_bytes(pr);
    // The floor's rows of the logits GEMM: x [t, hidden] and dx, dy [t, vocab], fp32.
    EXPECT_GE(dev, one_run(pr) + 4.0 * t * (2.0 * 256 + 4096));
    pr.numerics_steps = 200; // the series and the references' parameters stay on the host
    EXPECT_EQ(jobs::numerics_device_bytes(pr), dev);
    pr.sequences = 8; // the floor's largest micro-batch is the whole batch
    EXPECT_GE(jobs::numerics_device_bytes(pr) - dev, one_run(pr) - one_run(problem()));
}

TEST(numerics_memory, the_host_keeps_both_references_parameters_at_every_step) {
    auto pr = problem();
    const double at20 = jobs::numerics_bytes(pr);
    EXPECT_GE(at20, one_run(pr) + kernels::model::fp64_reference_bytes(pr.model, pr.seq_len) +
                        20 * 12.0 * params(pr));
    pr.numerics_steps = 40; // fp32 and fp64 parameters, 12 bytes each a step
    EXPECT_DOUBLE_EQ(jobs::numerics_bytes(pr) - at20, 20 * 12.0 * params(pr));
}
