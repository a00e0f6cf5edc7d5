// Internal to the accuracy measurement (attention_accuracy.cpp): the seeded samples, the values
// every rank gathered, and the measurement of one (batch, kv head) group.
#pragma once

#include "jobs/attention_accuracy.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::jobs::acc_detail {

/// The sampled rows: query rows per (batch, head), key rows per (batch, kv head), ascending.
struct samples {
    std::int64_t nq = 0, nk = 0;
    std::vector<std::vector<std::int64_t>> q_rows; ///< [B * H][nq]
    std::vector<std::vector<std::int64_t>> k_rows; ///< [B * Hkv][nk] (backward only)
    /// Floats per sampled query row gathered: O [D], LSE, and with a backward dQ [D].
    std::int64_t q_width(const attention_problem& pr) const {
        return pr.backward ? 2 * pr.head_dim + 1 : pr.head_dim + 1;
    }
};

/// The samples of `pr` with `sample` rows per head (kernels::sample_rows, seeded by `seed`).
samples draw_samples(const attention_problem& pr, std::uint64_t seed, std::int64_t sample);

/// What every rank holds after the gathers: the distributed values of the sampled query rows
/// ([B * H][nq][q_width]: O | LSE | dQ) and key rows ([B * Hkv][nk][2D]: dK | dV), and with a
/// backward the distributed LSE and delta of every row ([B * H][S]).
struct sampled_values {
    std::vector<float> q, k, lse, delta;
};

/// Measure group `group` (= b * Hkv + kv head): its query heads' sampled rows and its kv
/// head's sampled keys, against fp64 and the single-rank computation on `exec`; adds to `t`.
void measure_group(kernels::executor& exec, const attention_problem& pr, std::uint64_t seed,
                   const kernels::mask_view& mask, const samples& smp, const sampled_values& v,
                   std::int64_t group, accuracy_tallies& t);

} // namespace ringscale::jobs::acc_detail
