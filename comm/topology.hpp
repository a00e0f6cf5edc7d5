// Which node each rank runs on, and the orders of ranks that keep groups inside nodes or
// spread them across nodes. The node-aware schemes (the hybrid's Ulysses groups, train_step's
// context-parallel groups, the collectives' --scope) are built from these; the case identity
// records nodes and ranks per node. Only detect_node_layout communicates.
#pragma once

#include "comm/communicator.hpp"

#include <string>
#include <vector>

namespace ringscale::comm {

/// The node of every rank: node_of[r] in 0..nodes()-1, numbered in order of first appearance
/// (the order of /meta/hosts). Empty: every rank on one node (what a default launch_info
/// holds; resolve it with for_world).
struct node_layout {
    std::vector<int> node_of;

    /// One node holding `world` ranks.
    static node_layout single(int world);
    /// `nodes` nodes of `per_node` consecutive ranks each (block mapping).
    static node_layout blocks(int nodes, int per_node);
    /// `nodes` nodes, rank r on node r % nodes (round robin, `--map-by node`).
    static node_layout round_robin(int nodes, int world);
    /// This layout, or single(world) when it is empty.
    node_layout for_world(int world) const;

    bool empty() const { return node_of.empty(); }
    int world() const { return static_cast<int>(node_of.size()); }
    int nodes() const;
    /// Ranks on node `node`.
    int node_size(int node) const;
    /// The most ranks on any node (the figure recorded as ranks_per_node).
    int ranks_per_node() const;
    /// Every node holds the same number of ranks.
    bool uniform() const;
    /// Rank r's index among its node's ranks, in rank order (0 = the node's lowest rank).
    int local_index(int rank) const;
    /// "2 nodes x 2 ranks" or "2 nodes of 2, 1 ranks" (uneven). Pure.
    std::string describe() const;
};

/// Collective over `world`: the layout by host name (gethostname of every rank).
node_layout detect_node_layout(communicator& world);

/// The layout of host indices (one per rank, as /ranks/host_index holds them). Pure.
node_layout layout_of_hosts(const std::vector<int>& host_index);

/// Where the groups of a scheme go: each inside one node, or spread over the nodes.
enum class group_placement { node, across };
const char* to_string(group_placement p);
/// "node" | "across"; config_error naming `option` otherwise.
group_placement parse_group_placement(const std::string& text, const std::string& option);

/// An order of the ranks (order[i] = the rank at position i) in which groups of consecutive
/// positions follow `placement`: node = node by node, each node's ranks in rank order (a
/// group whose size divides every node's rank count stays inside one node); across = by local
/// index, then node (the ranks of a group sit on different nodes, as far as the nodes go).
/// One node, either placement: rank order. Pure.
std::vector<int> group_order(const node_layout& layout, group_placement placement);

/// The inverse of an order: position of each rank. Pure.
std::vector<int> positions_of(const std::vector<int>& order);

/// Whether every group of `size` consecutive positions of `order` lies on one node. Pure.
bool groups_inside_nodes(const node_layout& layout, const std::vector<int>& order, int size);

} // namespace ringscale::comm
