#include "jobs/registry.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::jobs {

// Factories defined in each job's file.
std::unique_ptr<job> make_collectives_job();
std::unique_ptr<job> make_ring_attention_job();
std::unique_ptr<job> make_context_parallel_job();
std::unique_ptr<job> make_train_step_job();

namespace {
std::vector<std::unique_ptr<job>> build() {
    std::vector<std::unique_ptr<job>> jobs;
    jobs.push_back(make_collectives_job());
    jobs.push_back(make_ring_attention_job());
    jobs.push_back(make_context_parallel_job());
    jobs.push_back(make_train_step_job());
    return jobs;
}
} // namespace

const std::vector<std::unique_ptr<job>>& all_jobs() {
    static const std::vector<std::unique_ptr<job>> jobs = build();
    return jobs;
}

const job& find_job(const std::string& name) {
    std::vector<std::string> names;
    for (const auto& j : all_jobs()) {
        if (j->name() == name)
            return *j;
        names.push_back(j->name());
    }
    throw config_error(
        fmt::format("--job: unknown job '{}' (known: {})", name, fmt::join(names, ", ")));
}

} // namespace ringscale::jobs

namespace ringscale {

std::vector<scheduled_case> plan_launch(const launch_config& cfg, const jobs::launch_info& launch) {
    std::vector<const jobs::job*> jobs;
    for (const auto& name : cfg.jobs)
        jobs.push_back(&jobs::find_job(name));
    return plan_launch(jobs, cfg, launch);
}

} // namespace ringscale
