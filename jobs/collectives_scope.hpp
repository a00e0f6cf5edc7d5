// The ranks a collectives case runs over (--scope): the whole world; within each node (every
// node's ranks side by side, each node its own communicator); or across the nodes (one rank
// per node: the node-local first ranks, the others idle), so the two kinds of link give two
// busbw figures. Planning is pure; only split_scope communicates.
#pragma once

#include "comm/communicator.hpp"
#include "comm/topology.hpp"

#include <memory>
#include <string>

namespace ringscale::jobs {

/// One scope on one launch's layout.
struct collective_scope {
    std::string name = "world"; ///< world | intra | inter
    int ranks = 1;              ///< ranks in each communicator of the scope
    int groups = 1;             ///< communicators that run side by side
};

/// The scope `name` on `layout` (empty: one node of `world` ranks). config_error (one line)
/// for intra or inter on nodes of different sizes, inter on one node, an unknown name. Pure.
collective_scope plan_scope(const std::string& name, const comm::node_layout& layout, int world);

/// The sendrecv peer distance `text` over `scope` on `layout`: a whole number, or "node" (the
/// ranks per node, so that every rank's peer is the same local rank on the next node and all
/// of a node's ranks send across at once). config_error (one line) for a distance outside
/// 1 .. ranks - 1 (1 alone on one rank), "node" on one node, on nodes of different sizes or
/// with a scope other than world. Pure.
int plan_shift(const std::string& text, const comm::node_layout& layout, int world,
               const collective_scope& scope);

/// The communicator this rank runs a case of `scope` on: split from `world` by node (intra)
/// or by node-local index (inter); nullptr for world (run on `world` itself). `active` is
/// false on the ranks that only watch (inter: every rank but each node's first). Collective.
std::unique_ptr<comm::communicator> split_scope(comm::communicator& world,
                                                const comm::node_layout& layout,
                                                const collective_scope& scope, bool& active);

} // namespace ringscale::jobs
