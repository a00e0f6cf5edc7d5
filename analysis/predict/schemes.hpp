// Each attention scheme's overlap rule, as ringscale's jobs run it (jobs/ring_core.cpp,
// jobs/context_parallel_*.cpp), priced by the figures of cost.hpp on the slowest rank:
//   ring:      forward P-1 steps of max(block compute, K/V transfer) and the last block;
//              backward P steps of max(block compute + sum, K/V transfer, dK/dV transfer) and
//              the last dK/dV hop home; with overlap off every transfer adds.
//   allgather: the gather overlaps the own block, then every other block; the backward's
//              ring reduce-scatter of dK/dV overlaps the next block.
//   ulysses:   two all-to-alls per pass (Q, K, V in and O out; dO in and dQ, dK, dV out),
//              not hidden, with their packing, around local attention on H/P heads.
//   hybrid:    Ulysses inside groups of u ranks around a ring across the P/u groups; the
//              groups inside nodes, or spread over them (placement::groups_across).
// Memory per rank follows the jobs' own accounting (the buffers each allocates).
#pragma once

#include "attention.hpp"
#include "cost.hpp"

#include <string>

namespace ringscale::analysis::predict {

/// Where the ranks are: `nodes` nodes of `ranks_per_node` ranks, filled in order.
struct placement {
    int world = 1;
    int nodes = 1;
    int ranks_per_node = 1;
    /// The hybrid's Ulysses groups spread over the nodes (--ulysses-placement across: ranks
    /// ordered by local index, then node) rather than each inside one node.
    bool groups_across = false;
};

/// The link a ring over all nodes is bounded by: inter-node when there are several nodes.
link_level ring_level(const placement& where);

/// A predicted step of one case on its slowest rank.
struct step_prediction {
    cost time;               ///< the critical path, by the figure that priced it
    double ideal_s = 0;      ///< the case's total compute over P ranks, no communication
    double memory_bytes = 0; ///< per rank, by the scheme's formula
    std::string memory_kind; ///< "host" or "device": what memory_bytes is compared with
    std::string label;       ///< scheme as run, e.g. "hybrid/u2"
    std::string refusal;     ///< non-empty: no prediction, and why
    bool ok() const { return refusal.empty(); }
};

/// The Ulysses degree a context_parallel variant runs on `where` (allgather 1, ulysses P,
/// hybrid the requested degree or, for 0, the job's auto degree: on one node the largest
/// divisor of P not above sqrt(P); on several the largest d up to the ranks per node that
/// divides them, P, the heads and the K/V heads, with kv_heads >= d (jobs/context_parallel.cpp
/// auto_ulysses_degree), so each group sits inside a node).
int ulysses_degree(const std::string& variant, int requested, const placement& where,
                   const attention_problem& a);

/// Predict one attention case: `scheme` is "ring" (ring_attention) or a context_parallel
/// variant; `width` the core-equivalents of every rank. `only_rank` >= 0 prices that rank
/// alone instead of the slowest.
step_prediction predict_attention(const std::string& scheme, int requested_u,
                                  const attention_problem& a, const placement& where,
                                  const figures& f, double width, int only_rank = -1);

/// Bytes per rank the scheme allocates (the jobs' accounting, without validation).
double attention_memory(const std::string& scheme, int u, const attention_problem& a, int ranks);

} // namespace ringscale::analysis::predict
