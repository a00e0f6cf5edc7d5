#include "src/engine/case_identity.hpp"

#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/run_loop.hpp"

#include <fmt/format.h>
#include <set>

namespace ringscale {

namespace {

std::string value_text(const jobs::attr_value& v) {
    return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

} // namespace

jobs::attr_map case_identity(const scheduled_case& pc, const launch_config& cfg,
                             const jobs::launch_info& launch) {
    const int world_size = launch.world_size;
    const comm::node_layout nodes = launch.nodes.for_world(world_size);
    jobs::attr_map id = param_attrs(pc.plan.values);
    // Weak scaling of the attention jobs: the user chose tokens per rank and a rule; the
    // global length they give at this P is derived (sort_job_attrs puts it there).
    if (id.count(schema::attr::seq_len_per_rank))
        id.erase(schema::attr::seq_len);
    // A job with a --variant option (context_parallel) may label its case with a value
    // resolved from P ("hybrid/u2"); the identity keeps the user's choice.
    if (!pc.plan.values.has(schema::attr::variant))
        id[schema::attr::variant] = pc.plan.variant;
    id[schema::attr::job] = pc.plan.job;
    id[schema::attr::world_size] = static_cast<std::int64_t>(world_size);
    // 4 ranks on 1 node and 4 ranks on 4 nodes are different cases.
    id[schema::attr::nodes] = static_cast<std::int64_t>(nodes.nodes());
    id[schema::attr::ranks_per_node] = static_cast<std::int64_t>(nodes.ranks_per_node());
    if (!nodes.uniform())
        id[schema::attr::uneven_nodes] = std::int64_t{1};
    id[schema::attr::device] = std::string(to_string(cfg.device));
    id[schema::attr::comm] = std::string(to_string(cfg.comm));
    id.emplace(schema::attr::dtype, std::string("float32"));
    id.emplace(schema::attr::scaling, std::string("strong"));
    id[schema::attr::threads] = static_cast<std::int64_t>(cfg.threads);
    // A forced attention kernel path is the user's choice (--resume must not take an sm80
    // case for an sm90 one); "auto" stays out, so files from before the option still match.
    if (cfg.device == device_kind::cuda && cfg.attn_kernel != "auto" &&
        pc.plan.job != "collectives")
        id[schema::attr::attn_kernel] = cfg.attn_kernel;
    return id;
}

jobs::attr_map case_run_attrs(const launch_config& cfg) {
    return {{schema::attr::warmup, static_cast<std::int64_t>(cfg.warmup)},
            {schema::attr::iterations, static_cast<std::int64_t>(cfg.iters)},
            {schema::attr::seed, static_cast<std::int64_t>(cfg.seed)}};
}

void sort_job_attrs(const jobs::attr_map& from_job, jobs::attr_map& identity,
                    jobs::attr_map& derived, jobs::attr_map& outcome) {
    // Resolved from the user's value alone (auto -> float32 on a CPU, kv_heads 0 -> heads,
    // a --seq-preset entry -> its length): still the same choice at every P.
    static const std::set<std::string> resolutions = {schema::attr::dtype, schema::attr::kv_heads,
                                                      schema::attr::seq_len};
    for (const auto& [name, value] : from_job) {
        if (schema::job_attr_group(name) == schema::attr_group::outcome) {
            outcome[name] = value;
            continue;
        }
        auto it = identity.find(name);
        if (resolutions.count(name) && it != identity.end())
            it->second = value;
        else if (it == identity.end() || value_text(it->second) != value_text(value))
            derived[name] = value;
    }
}

std::string case_key(const jobs::attr_map& identity, const jobs::attr_map& run) {
    jobs::attr_map keyed = identity;
    const auto job = identity.find(schema::attr::job);
    const auto p = identity.find(schema::attr::world_size);
    if (job != identity.end() && p != identity.end())
        for (const auto& [name, value] : schema::identity_defaults(
                 value_text(job->second), std::stoll(value_text(p->second)))) {
            const auto it = keyed.find(name);
            if (it != keyed.end() && value_text(it->second) == value)
                keyed.erase(it);
        }
    std::string text;
    for (const jobs::attr_map* group : {static_cast<const jobs::attr_map*>(&keyed), &run})
        for (const auto& [k, v] : *group) // std::map: sorted, stable
            text += fmt::format("{}={}\n", k, value_text(v));
    return fmt::format("{:016x}", fnv1a64(text));
}

std::string case_key(const scheduled_case& pc, const launch_config& cfg,
                     const jobs::launch_info& launch) {
    return case_key(case_identity(pc, cfg, launch), case_run_attrs(cfg));
}

} // namespace ringscale
