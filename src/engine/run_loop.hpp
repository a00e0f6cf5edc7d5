// The run loop: plan every case up front (with the memory preflight), then for each case
// allocate, warm up, time iterations after a barrier, validate, gather and hand to rank 0.
#pragma once

#include "src/engine/config.hpp"
#include "src/engine/job.hpp"
#include "src/engine/machine_probe.hpp"
#include "src/engine/results_writer.hpp"

#include <vector>

namespace ringscale {

struct scheduled_case {
    const jobs::job* job = nullptr;
    jobs::case_plan plan;
    int repeat = 0; ///< repetition (--repeat), 0-based; not part of the case's identity
};

/// `cases` repeated `repeats` times, interleaved: 1..K, then 1..K again, so that drift over
/// the launch (thermal, neighbours, page cache) hits every case alike; copy r has repeat = r.
/// Pure.
std::vector<scheduled_case> interleave_repeats(const std::vector<scheduled_case>& cases,
                                               int repeats);

/// Every case of `jobs` (in order), in run order (--repeat: interleaved repetitions), after
/// each job's checks and the memory preflight (a case that cannot fit is skipped if
/// skippable, else config_error). Pure, no MPI. jobs/registry.hpp has the overload that
/// takes the jobs cfg.jobs names.
std::vector<scheduled_case> plan_launch(const std::vector<const jobs::job*>& jobs,
                                        const launch_config& cfg, const jobs::launch_info& launch);

/// Parameters of a plan as typed attributes ("seq-len" -> seq_len, "4096" -> int64).
jobs::attr_map param_attrs(const jobs::params& p);

/// Run one case on every rank (collective) and return its record (complete on every rank).
/// A failure raised alike on all ranks before the timed loop is recorded, not thrown. With
/// `machine`, what the machine did over the iterations (warm-up and timed) is recorded too
/// (rec.machine) and the case is marked contended (outcome) when machine_marks says so.
case_record run_case(const scheduled_case& pc, const launch_config& cfg, jobs::run_context& ctx,
                     const machine_context* machine = nullptr);

} // namespace ringscale
