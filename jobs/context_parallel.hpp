// Job `context_parallel`'s planning rules: its variants (all-gather; Ulysses, and the hybrid's
// ring across Ulysses groups; the schemes themselves are jobs/schemes) and where they fit. A
// case is the attention jobs' one case (jobs/attention_case.hpp) with the scheme it names.
#pragma once

#include "comm/topology.hpp"
#include "jobs/attention_common.hpp"

#include <string>

namespace ringscale::jobs {

/// The scheme of one case: "allgather", "ulysses" or "hybrid", and its Ulysses degree u
/// (ranks per Ulysses group: 1 for allgather, P for ulysses, --ulysses-degree for hybrid).
struct cp_scheme {
    std::string variant;
    int ulysses_degree = 1;
    /// hybrid: each Ulysses group inside one node (node) or spread over the nodes (across).
    comm::group_placement placement = comm::group_placement::node;
    /// The name in the results file: "allgather", "ulysses", "hybrid/u<u>" ("hybrid/u<u>/across"
    /// with its groups spread over the nodes).
    std::string name() const;
};

/// Read --variant, --ulysses-degree and --ulysses-placement of one case of `pr` on `ranks`
/// ranks placed on `nodes` (empty: one node). --ulysses-degree 0 = auto: on one node the
/// largest divisor u of P with u*u <= P; on several, the ranks per node when the heads allow
/// (else the largest u dividing every node's ranks, the heads and the kv-heads), so each
/// Ulysses group fits in a node. config_error for an unknown variant or placement.
cp_scheme read_cp_scheme(const params& p, const attention_problem& pr,
                         const comm::node_layout& nodes, int ranks);

/// Throws config_error (one line naming the constraint) unless the case can run on `ranks`
/// ranks: the layout divides S; a hybrid placed by node has u no larger than the largest
/// node; u divides P; heads and kv-heads divisible by u, kv-heads >= u.
void check_cp_case(const cp_scheme& scheme, const attention_problem& pr,
                   const comm::node_layout& nodes, int ranks);

/// The warning for a hybrid placed by node whose Ulysses groups cannot all stay inside a
/// node (u does not divide every node's ranks); "" otherwise. Pure.
std::string cp_placement_note(const cp_scheme& scheme, const comm::node_layout& nodes, int ranks);

/// The order of the ranks the hybrid's groups are cut from (comm::group_order; rank order
/// when u is 1 or P: one ring of every rank, one group of every rank). Pure.
std::vector<int> cp_rank_order(const cp_scheme& scheme, const comm::node_layout& nodes, int ranks);

/// Estimated peak tracked host bytes per rank (inputs, outputs, exchange buffers,
/// validation when `validate`). All-gather's grows with S: it holds every rank's K/V.
std::uint64_t cp_bytes_per_rank(const cp_scheme& scheme, const attention_problem& pr, int ranks,
                                bool validate);

} // namespace ringscale::jobs
