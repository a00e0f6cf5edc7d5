// The checks a case's data must pass before it becomes a figure (src/base/stored_case.hpp): a
// damaged or hand-edited file must not turn into a number. Each names the first thing wrong.
#include "stored_case.hpp"

#include "checked_count.hpp"
#include "results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ringscale::stored {

namespace {

std::optional<double> number(const attr_map& attrs, const char* name) {
    const auto it = attrs.find(name);
    return it == attrs.end() ? std::nullopt : it->second.number;
}

/// The first value of `v` that is not a finite, non-negative time, described, or "".
std::string bad_time(const std::vector<double>& v, const char* name, std::size_t world) {
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!(std::isfinite(v[i]) && v[i] >= 0))
            return fmt::format("{} [iteration {}, rank {}] is {}: times must be finite and >= 0",
                               name, i / world, i % world, v[i]);
    return "";
}

/// The first CPU time or hardware count of `d.cpu` that is neither NaN (not measured) nor
/// finite and >= 0, described, or "".
std::string bad_cpu(const case_arrays& d) {
    for (const auto& [name, v] : d.cpu)
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!std::isnan(v[i]) && !(std::isfinite(v[i]) && v[i] >= 0))
                return fmt::format("{} [iteration {}, rank {}] is {}: it must be finite and >= 0 "
                                   "(or NaN: not measured)",
                                   name, i / d.world, i % d.world, v[i]);
    return "";
}

/// Exposed communication is part of the step: more than the step's own time is no reading.
std::string comm_above_step(const case_arrays& d) {
    if (d.comm_wait_s.size() != d.time_s.size())
        return "";
    for (std::size_t i = 0; i < d.time_s.size(); ++i)
        if (d.comm_wait_s[i] > d.time_s[i] * (1 + comm_tolerance_rel) + comm_tolerance_s)
            return fmt::format("comm_wait_s [iteration {}, rank {}] is {} s, more than that "
                               "step's time_s {} s",
                               i / d.world, i % d.world, d.comm_wait_s[i], d.time_s[i]);
    return "";
}

std::string per_rank_problem(const case_arrays& d) {
    auto check = [&](const std::string& name, const std::vector<double>& v) -> std::string {
        if (v.size() != d.world)
            return fmt::format("{} has {} values for {} ranks", name, v.size(), d.world);
        for (std::size_t k = 0; k < v.size(); ++k)
            if (!(std::isfinite(v[k]) && v[k] >= 0))
                return fmt::format("{} [rank {}] is {}: it must be finite and >= 0", name, k, v[k]);
        return "";
    };
    for (const auto& [name, v] : d.memory_bytes)
        if (std::string why = check(name, v); !why.empty())
            return why;
    for (const auto& [v, name] :
         {std::pair{&d.threads, "threads"}, {&d.affinity_cores, "affinity_cores"}})
        if (!v->empty())
            if (std::string why = check(name, {v->begin(), v->end()}); !why.empty())
                return why;
    return "";
}

/// Factors and counts a job derived: a negative one turns into a negative bandwidth.
std::string derived_problem(const attr_map& attrs) {
    // busbw_factor is 0 for a collective on one rank (2(n-1)/n): only a negative one is wrong.
    for (const char* name : {"busbw_factor", "bytes", "count", "flops_per_iter",
                             "comm_bytes_per_iter", "tokens_per_iter"})
        if (const auto v = number(attrs, name); v && !(std::isfinite(*v) && *v >= 0))
            return fmt::format("{} is {}: it must be finite and >= 0", name, *v);
    return "";
}

/// A count of the topology (world_size, nodes, ranks_per_node), when present: a whole number
/// from 1 to 2^24 (max_ranks). Sets `out` to it (0 when absent).
std::string count_problem(const attr_map& attrs, const char* name, std::int64_t& out) {
    out = 0;
    const auto it = attrs.find(name);
    if (it == attrs.end())
        return "";
    const std::optional<double> v = it->second.number;
    if (!v)
        return fmt::format("{} is '{}': a count of ranks must be a number", name,
                           it->second.text.substr(0, 40));
    if (!(std::isfinite(*v) && *v == std::floor(*v) && *v >= 1 &&
          *v <= static_cast<double>(max_ranks)))
        return fmt::format("{} is {}: it must be a whole number from 1 to 2^24", name, *v);
    out = static_cast<std::int64_t>(*v);
    return "";
}

/// nodes x ranks_per_node against world_size; with uneven_nodes = 1 ranks_per_node is the most
/// on one node and every other node holds at least one rank.
std::string topology_problem(const attr_map& attrs) {
    std::int64_t world = 0, nodes = 0, per_node = 0, uneven = 0;
    for (const auto& [name, out] : {std::pair{"world_size", &world},
                                    {schema::attr::nodes, &nodes},
                                    {schema::attr::ranks_per_node, &per_node}})
        if (std::string why = count_problem(attrs, name, *out); !why.empty())
            return why;
    if (const auto it = attrs.find(schema::attr::uneven_nodes); it != attrs.end()) {
        if (it->second.number != std::optional<double>(1.0))
            return fmt::format("uneven_nodes is '{}': it is 1 when present",
                               it->second.text.substr(0, 40));
        uneven = 1;
    }
    if (world == 0 || (nodes == 0 && per_node == 0))
        return "";
    if (nodes == 0 || per_node == 0)
        return fmt::format("{} is given without {}", nodes ? "nodes" : "ranks_per_node",
                           nodes ? "ranks_per_node" : "nodes");
    const std::int64_t full = nodes * per_node; // both at most 2^24: no overflow
    if (!uneven && full != world)
        return fmt::format("nodes {} x ranks_per_node {} = {}, but world_size is {}", nodes,
                           per_node, full, world);
    if (uneven && !(nodes >= 2 && per_node + nodes - 1 <= world && world < full))
        return fmt::format("uneven_nodes with nodes {} and at most {} ranks per node cannot hold "
                           "world_size {}",
                           nodes, per_node, world);
    return "";
}

/// The sendrecv peer distance: a whole number from 1 to world_size - 1, or "node".
std::string shift_problem(const attr_map& attrs) {
    const auto it = attrs.find("shift");
    if (it == attrs.end())
        return "";
    const std::optional<double> v = it->second.number;
    if (!v)
        return it->second.text == "node"
                   ? ""
                   : fmt::format("shift is '{}': not a peer distance or 'node'",
                                 it->second.text.substr(0, 40));
    const auto world = number(attrs, "world_size");
    if (!(std::isfinite(*v) && *v == std::floor(*v) && *v >= 1 && (!world || *v < *world)))
        return fmt::format(
            "shift is {}: a peer distance is a whole number from 1 to world_size - 1", *v);
    return "";
}

} // namespace

std::string identity_problem(const attr_map& attrs) {
    if (std::string why = topology_problem(attrs); !why.empty())
        return why;
    if (std::string why = shift_problem(attrs); !why.empty())
        return why;
    for (const auto& [name, value] : attrs)
        if (const std::vector<std::string>* allowed = schema::allowed_values(name))
            if (std::find(allowed->begin(), allowed->end(), value.text) == allowed->end())
                return fmt::format("{} is '{}': not one of {}", name, value.text.substr(0, 40),
                                   fmt::join(*allowed, ", "));
    return "";
}

std::string data_problem(const case_arrays& d, const attr_map& attrs, bool ok) {
    if (d.world == 0)
        return "timings have no rank columns";
    const auto world_size = number(attrs, "world_size");
    if (world_size && *world_size != static_cast<double>(d.world))
        return fmt::format("world_size is {} but the timings have {} rank columns", *world_size,
                           d.world);
    for (std::size_t r = 0; r < d.is_warmup.size(); ++r)
        if (d.is_warmup[r] > 1)
            return fmt::format("is_warmup[{}] is {}: warm-up flags must be 0 or 1", r,
                               static_cast<int>(d.is_warmup[r]));
    if (d.is_warmup.size() != d.rows)
        return "is_warmup length differs from time_s rows";
    std::size_t timed = 0;
    for (const auto w : d.is_warmup)
        timed += w == 0;
    if (ok && timed == 0)
        return "no timed iteration (every row is warm-up)";
    for (const auto& [v, name] : {std::pair{&d.time_s, "time_s"},
                                  {&d.compute_s, "compute_s"},
                                  {&d.comm_wait_s, "comm_wait_s"}})
        if (std::string why = bad_time(*v, name, d.world); !why.empty())
            return why;
    if (std::string why = comm_above_step(d); !why.empty())
        return why;
    if (std::string why = bad_cpu(d); !why.empty())
        return why;
    if (std::string why = per_rank_problem(d); !why.empty())
        return why;
    return derived_problem(attrs);
}

std::vector<std::uint8_t> warmup_from_attribute(std::size_t rows, const attr_map& attrs) {
    const auto w = number(attrs, "warmup");
    if (!w || *w < 0 || *w != std::floor(*w) || *w > static_cast<double>(rows))
        return {};
    std::vector<std::uint8_t> flags(rows, 0);
    for (std::size_t r = 0; r < static_cast<std::size_t>(*w); ++r)
        flags[r] = 1;
    return flags;
}

} // namespace ringscale::stored
