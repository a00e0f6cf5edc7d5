// The list of jobs the launcher knows. Adding a job: one file, one line in registry.cpp.
#pragma once

#include "jobs/job.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// Every registered job, in registration order.
const std::vector<std::unique_ptr<job>>& all_jobs();

/// The job called `name`; config_error listing the known jobs otherwise.
const job& find_job(const std::string& name);

} // namespace ringscale::jobs
