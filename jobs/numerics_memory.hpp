// What train_step --numerics adds to a rank's memory, for the launch's estimate before any case
// runs: on the host, and on a GPU where the same-dtype reference's and the floor's single-rank
// runs live there (jobs/train_numerics.hpp runs them).
#pragma once

#include "jobs/train_problem.hpp"

namespace ringscale::jobs {

/// Host bytes the numerics mode adds per rank (the reference's parameters at every step, in
/// fp32 and in fp64, the fp64 reference's own state, a single-rank run's state and
/// activations and, on the CPU, the floor's reordered rows).
double numerics_bytes(const train_problem& pr);

/// Device bytes the numerics mode adds per rank on a GPU (the run's own are
/// train_problem::device_bytes_per_rank's): one single-rank run of the same-dtype reference or
/// the floor at a time, on the whole batch (the floor's largest micro-batch), with the floor's
/// reordered rows; --dtype's operand buffers are counted with the run's. 0 without --numerics.
double numerics_device_bytes(const train_problem& pr);

} // namespace ringscale::jobs
