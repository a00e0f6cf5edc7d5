// Job `context_parallel`'s parts: the planning rules of its variants and the cases of the
// two families (all-gather; Ulysses, with the hybrid's ring across Ulysses groups). Each
// case starts from the sequence-sharded Q/K/V/dO the ring attention job uses and leaves O
// (and dQ, dK, dV) in that same layout, so both are validated the same way.
#pragma once

#include "jobs/attention_common.hpp"

#include <memory>
#include <string>

namespace ringscale::jobs {

/// The scheme of one case: "allgather", "ulysses" or "hybrid", and its Ulysses degree u
/// (ranks per Ulysses group: 1 for allgather, P for ulysses, --ulysses-degree for hybrid).
struct cp_scheme {
    std::string variant;
    int ulysses_degree = 1;
    /// The name in the results file: "allgather", "ulysses", "hybrid/u<u>".
    std::string name() const;
};

/// Read --variant and --ulysses-degree of one case on `ranks` ranks (0 = auto: the largest
/// divisor u of P with u*u <= P). config_error for an unknown variant.
cp_scheme read_cp_scheme(const params& p, int ranks);

/// Throws config_error (one line naming the constraint) unless the case can run on `ranks`
/// ranks: the layout divides S; u divides P; heads and kv-heads divisible by u, kv-heads >= u.
void check_cp_case(const cp_scheme& scheme, const attention_problem& pr, int ranks);

/// Estimated peak tracked host bytes per rank (inputs, outputs, exchange buffers,
/// validation when `validate`). All-gather's grows with S: it holds every rank's K/V.
std::uint64_t cp_bytes_per_rank(const cp_scheme& scheme, const attention_problem& pr, int ranks,
                                bool validate);

/// Cases; nothing is allocated until setup(). The hybrid's sub-communicators are split here
/// (collective over ctx.world), before anything can fail on one rank alone.
std::unique_ptr<case_runner> make_allgather_case(const attention_problem& pr, run_context& ctx);
std::unique_ptr<case_runner> make_ulysses_case(const attention_problem& pr, const cp_scheme& scheme,
                                               run_context& ctx);

} // namespace ringscale::jobs
