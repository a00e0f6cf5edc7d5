// Validation of the training step: the distributed run after k steps against the single-rank
// reference (kernels::reference_train) on the same model, seed and global batch.
//
// Tolerances (fp32; the reductions sum in another order than the reference, so results are
// not bit-exact):
//  - step-1 gradient: |g - g_ref| <= 1e-4 * max|g_ref|. Partial sums of O(tokens) terms
//    round at ~1e-7 relative; a gradient averaged instead of summed over ranks, or a missing
//    shard, is off by O(max|g|). AdamW is invariant to the gradient's scale, so only this
//    check catches a wrong dp/cp normalisation.
//  - parameters after k steps: |p - p_ref| <= 0.25 * lr * k. AdamW moves a parameter with a
//    steady gradient by ~lr per step, so a missed, doubled, stale or misplaced update is off
//    by >= lr per step. Adam normalises each gradient element by its own magnitude, so an
//    element whose gradient is near the fp32 noise floor (e.g. query weights while attention
//    is still nearly uniform) amplifies order-of-summation noise: measured up to ~0.01*lr*k
//    on the test models, a 25x margin below the tolerance.
//  - loss of every step: |l - l_ref| <= 1e-5 * l_ref (a double sum of fp32 shard losses).
#pragma once

#include "jobs/job.hpp"

#include <vector>

namespace ringscale::jobs {

/// One side of the comparison: losses of steps 1..k, step 1's gradient, parameters after k.
struct training_trace {
    std::vector<double> losses;
    std::vector<float> first_grads, params;
};

/// Compare `got` with `want` (the reference) under the tolerances above; `lr` and the step
/// count set the parameter tolerance. Writes the three errors and tolerances into `details`.
/// Not collective (every rank holds both traces in full).
validation compare_training(const training_trace& got, const training_trace& want, double lr,
                            attr_map& details);

} // namespace ringscale::jobs
