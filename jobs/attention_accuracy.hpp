// An attention case's accuracy against fp64 on sampled rows (DESIGN.md, "Accuracy against
// fp64"). Per case, for the distributed result and for the single-rank computation of the same
// rows (the same kernels, dtype and merge on one rank), the normwise max and RMS relative
// errors (kernels/accuracy.hpp) of:
//   O, LSE, dQ  on a seeded sample of query rows per (batch, head), against the exact fp64
//               reference (kernels/reference/attention_sampled.hpp);
//   dK, dV      on a seeded sample of key rows per (batch, kv head), against fp64 arithmetic
//               over every query row that takes each row's LSE and delta (rowsum(dO * O)) from
//               the distributed result: the backward's own error and its accumulation across
//               ranks (exact row statistics need the whole O(S^2 D) forward in fp64).
// The cost is the sample x S x D, split over the ranks by (batch, kv head) group.
#pragma once

#include "jobs/attention_common.hpp"
#include "kernels/accuracy.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::jobs {

/// The tensors measured, in the order the results name them.
enum class acc_tensor { o, lse, dq, dk, dv };
inline constexpr int acc_tensor_count = 5;

/// The name a tensor has in the results ("o", "lse", "dq", "dk", "dv").
const char* acc_tensor_name(acc_tensor t);

/// What one measurement found, identical on every rank.
struct accuracy_tallies {
    kernels::error_tally dist[acc_tensor_count];   ///< the distributed result
    kernels::error_tally single[acc_tensor_count]; ///< the single-rank computation
    std::int64_t query_rows = 0; ///< sampled per (batch, head): all rows when S is smaller
    std::int64_t key_rows = 0;   ///< sampled per (batch, kv head); 0 without a backward
    double seconds = 0;          ///< the measurement's wall time (the slowest rank)

    /// The outcome attributes (schema::attr::acc_*): per measured tensor its max and RMS
    /// relative errors, distributed and single-rank, and the sample and the time.
    attr_map attrs() const;
};

/// This rank's share of the distributed result on the host: fp32, its own rows (the
/// positions[rank] of measure_accuracy) as the schemes leave them, O and dQ [B, H, rows, D],
/// LSE [B, H, rows], dK and dV [B, Hkv, rows, D]; the gradients empty without a backward.
struct local_result {
    std::vector<float> o, lse, dq, dk, dv;
};

/// Collective over `c` (every rank of the case): measure `mine` against the fp64 reference
/// and the single-rank computation run on `exec` (the case's executor, so on CUDA the real
/// kernels; `mask` is pr's mask with its arrays where `exec` reads them). `sample`: rows per
/// head (at least 1). `positions[r]`: rank r's global rows, sorted.
accuracy_tallies measure_accuracy(comm::communicator& c, kernels::executor& exec,
                                  const attention_problem& pr, std::uint64_t seed,
                                  std::int64_t sample,
                                  const std::vector<std::vector<std::int64_t>>& positions,
                                  const kernels::mask_view& mask, const local_result& mine);

/// The measurement's time over one iteration's on `ranks` ranks, estimated from their work
/// (fp64 counted twice, the measurement's loops weighed at their measured speed): what
/// --accuracy auto compares with 5% of the case's iterations. Pure.
double accuracy_cost_fraction(const attention_problem& pr, std::int64_t sample, int ranks);

/// Bytes per rank the measurement allocates at most, beyond the case's own. Pure.
std::uint64_t accuracy_bytes(const attention_problem& pr, std::int64_t sample);

} // namespace ringscale::jobs
