// One case of an attention job (ring_attention, context_parallel): the seeded,
// sequence-sharded Q, K, V (and dO) of every rank, one scheme of jobs/schemes over them, and
// the result (O; dQ, dK, dV) gathered and validated against the single-rank reference. The
// jobs differ only in the scheme they name.
#pragma once

#include "jobs/attention_common.hpp"
#include "jobs/schemes/cp_attention.hpp"

#include <memory>

namespace ringscale::jobs {

/// The case of `pr` on ctx.world by the scheme `scheme` (its element type becomes pr.type;
/// each backward follows its forward). Nothing is allocated until setup(); collective over
/// ctx.world (the hybrid splits it here, before anything can fail on one rank alone).
std::unique_ptr<case_runner> make_attention_case(const attention_problem& pr,
                                                 schemes::cp_config scheme, run_context& ctx);

} // namespace ringscale::jobs
