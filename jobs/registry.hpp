// The list of jobs the launcher knows. Adding a job: one file, one line in registry.cpp.
#pragma once

#include "src/engine/job.hpp"
#include "src/engine/run_loop.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// Every registered job, in registration order.
const std::vector<std::unique_ptr<job>>& all_jobs();

/// The job called `name`; config_error listing the known jobs otherwise.
const job& find_job(const std::string& name);

} // namespace ringscale::jobs

namespace ringscale {

/// The engine's plan_launch over the registered jobs that cfg.jobs names.
std::vector<scheduled_case> plan_launch(const launch_config& cfg, const jobs::launch_info& launch);

} // namespace ringscale
