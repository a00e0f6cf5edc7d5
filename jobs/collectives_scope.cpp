#include "jobs/collectives_scope.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <fmt/format.h>

namespace ringscale::jobs {

collective_scope plan_scope(const std::string& name, const comm::node_layout& layout, int world) {
    const comm::node_layout l = layout.for_world(world);
    collective_scope s;
    s.name = name;
    if (name == "world") {
        s.ranks = world;
        return s;
    }
    if (name != "intra" && name != "inter")
        throw config_error(fmt::format("--scope: '{}' is not one of world, intra, inter", name));
    if (name == "inter" && l.nodes() < 2)
        throw config_error(fmt::format("--scope inter measures the links between nodes, but all "
                                       "{} ranks run on one node; use --scope world or intra",
                                       world));
    if (!l.uniform())
        throw config_error(fmt::format("--scope {} needs the same number of ranks on every node; "
                                       "this launch has {}",
                                       name, l.describe()));
    s.ranks = name == "intra" ? l.ranks_per_node() : l.nodes();
    s.groups = name == "intra" ? l.nodes() : 1;
    return s;
}

int plan_shift(const std::string& text, const comm::node_layout& layout, int world,
               const collective_scope& scope) {
    if (text == "node") {
        const comm::node_layout l = layout.for_world(world);
        if (scope.name != "world")
            throw config_error(fmt::format("--shift node sends across nodes: it needs --scope "
                                           "world, not {}",
                                           scope.name));
        if (l.nodes() < 2)
            throw config_error(fmt::format("--shift node sends to the next node, but all {} "
                                           "ranks run on one node",
                                           world));
        if (!l.uniform())
            throw config_error(fmt::format("--shift node needs the same number of ranks on every "
                                           "node; this launch has {}",
                                           l.describe()));
        return l.ranks_per_node();
    }
    const std::int64_t s = parse_int(text, "shift");
    const std::int64_t most = std::max(1, scope.ranks - 1);
    if (s < 1 || s > most)
        throw config_error(fmt::format("--shift {}: a sendrecv peer distance must be 1 to {} on "
                                       "the {} ranks of --scope {} (or node)",
                                       s, most, scope.ranks, scope.name));
    return static_cast<int>(s);
}

std::unique_ptr<comm::communicator> split_scope(comm::communicator& world,
                                                const comm::node_layout& layout,
                                                const collective_scope& scope, bool& active) {
    active = true;
    if (scope.name == "world")
        return nullptr;
    const comm::node_layout l = layout.for_world(world.size());
    const int me = world.rank();
    const int node = l.node_of[static_cast<std::size_t>(me)], local = l.local_index(me);
    if (scope.name == "intra")
        return world.split(node, local);
    // One communicator per node-local index, so that every rank takes part in the split;
    // only the first ranks' runs: one flow per node, the link's whole rate.
    active = local == 0;
    return world.split(local, node);
}

} // namespace ringscale::jobs
