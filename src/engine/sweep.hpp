// The sweep: every option a job declares, parsed and checked from the user's lists, expanded
// into points (the cartesian product of the options that sweep, in declaration order), and
// handed to the job's plan(). The number of cases a launch may plan is capped here.
#pragma once

#include "src/engine/job.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::jobs {

/// The most cases one launch may plan (repetitions included): a larger sweep is a typo or
/// belongs in several launches, and planning it would exhaust memory before any work.
inline constexpr std::uint64_t max_cases_per_launch = 100000;

/// Check `decls`' sweep over `lists` without expanding it, as expand_sweep does; returns the
/// number of points. The CLI calls it as soon as the command line is read. Pure.
std::uint64_t check_sweep(const std::vector<option_decl>& decls, const param_lists& lists);

/// The points of `decls`' sweep over `lists` (the user's text; a declared option missing
/// from `lists`, or given as the one value "", takes its default; one without default stays
/// absent). Every value is parsed and checked (parse_value); a list is refused where the
/// option does not sweep; a named list (--seq-preset) replaces its option's list, its
/// values marked with from_list; the product is counted with overflow checks and refused
/// above max_cases_per_launch before anything is expanded; the first option varies
/// slowest. config_error with one line on bad input. Pure.
std::vector<params> expand_sweep(const std::vector<option_decl>& decls, const param_lists& lists);

/// `j`'s cases from the user's lists: j.plan(expand_sweep(j.options(), lists), launch),
/// refused above max_cases_per_launch. Pure; config_error on bad input.
std::vector<case_plan> plan_job(const job& j, const param_lists& lists, const launch_info& launch);

/// config_error unless `cases` cases, each run `repeats` times, fit in one launch. Pure.
void check_case_count(std::uint64_t cases, std::uint64_t repeats);

} // namespace ringscale::jobs
