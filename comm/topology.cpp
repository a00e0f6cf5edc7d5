#include "comm/topology.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>
#include <unistd.h>

namespace ringscale::comm {

node_layout node_layout::single(int world) {
    return {std::vector<int>(static_cast<std::size_t>(std::max(world, 0)), 0)};
}

node_layout node_layout::blocks(int nodes, int per_node) {
    node_layout l;
    for (int n = 0; n < nodes; ++n)
        l.node_of.insert(l.node_of.end(), static_cast<std::size_t>(per_node), n);
    return l;
}

node_layout node_layout::round_robin(int nodes, int world) {
    node_layout l;
    for (int r = 0; r < world; ++r)
        l.node_of.push_back(r % nodes);
    return l;
}

node_layout node_layout::for_world(int world) const {
    return empty() ? single(world) : *this;
}

int node_layout::nodes() const {
    return empty() ? 1 : *std::max_element(node_of.begin(), node_of.end()) + 1;
}

int node_layout::node_size(int node) const {
    return static_cast<int>(std::count(node_of.begin(), node_of.end(), node));
}

int node_layout::ranks_per_node() const {
    int most = 0;
    for (int n = 0; n < nodes(); ++n)
        most = std::max(most, node_size(n));
    return most;
}

bool node_layout::uniform() const {
    for (int n = 0; n < nodes(); ++n)
        if (node_size(n) != ranks_per_node())
            return false;
    return true;
}

int node_layout::local_index(int rank) const {
    const int node = node_of[static_cast<std::size_t>(rank)];
    return static_cast<int>(std::count(node_of.begin(), node_of.begin() + rank, node));
}

std::string node_layout::describe() const {
    if (uniform())
        return fmt::format("{} node{} x {} rank{}", nodes(), nodes() == 1 ? "" : "s",
                           ranks_per_node(), ranks_per_node() == 1 ? "" : "s");
    std::vector<int> sizes;
    for (int n = 0; n < nodes(); ++n)
        sizes.push_back(node_size(n));
    return fmt::format("{} nodes of {} ranks", nodes(), fmt::join(sizes, ", "));
}

node_layout layout_of_hosts(const std::vector<int>& host_index) {
    // Renumber by first appearance, so that any host numbering gives the same layout.
    std::vector<int> seen;
    node_layout l;
    for (const int h : host_index) {
        auto it = std::find(seen.begin(), seen.end(), h);
        if (it == seen.end())
            it = seen.insert(seen.end(), h);
        l.node_of.push_back(static_cast<int>(it - seen.begin()));
    }
    return l;
}

node_layout detect_node_layout(communicator& world) {
    constexpr std::size_t width = 256; // host names are at most 255 bytes (HOST_NAME_MAX 64)
    std::vector<char> mine(width, '\0');
    gethostname(mine.data(), width - 1);
    std::vector<char> all(width * static_cast<std::size_t>(world.size()));
    world.all_gather(mine.data(), all.data(), width, dtype::u8);
    std::vector<std::string> names;
    std::vector<int> host_index;
    for (int r = 0; r < world.size(); ++r) {
        const std::string name(all.data() + width * static_cast<std::size_t>(r));
        auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end())
            it = names.insert(names.end(), name);
        host_index.push_back(static_cast<int>(it - names.begin()));
    }
    return layout_of_hosts(host_index);
}

const char* to_string(group_placement p) {
    return p == group_placement::node ? "node" : "across";
}

group_placement parse_group_placement(const std::string& text, const std::string& option) {
    if (text == "node")
        return group_placement::node;
    if (text == "across")
        return group_placement::across;
    throw config_error(fmt::format("--{}: '{}' is not one of node, across", option, text));
}

std::vector<int> group_order(const node_layout& layout, group_placement placement) {
    std::vector<int> order(static_cast<std::size_t>(layout.world()));
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int r) {
        const int node = layout.node_of[static_cast<std::size_t>(r)];
        const int local = layout.local_index(r);
        return placement == group_placement::node ? std::make_pair(node, local)
                                                  : std::make_pair(local, node);
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
    return order;
}

std::vector<int> positions_of(const std::vector<int>& order) {
    std::vector<int> pos(order.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        pos[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
    return pos;
}

bool groups_inside_nodes(const node_layout& layout, const std::vector<int>& order, int size) {
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::size_t first = i - i % static_cast<std::size_t>(size);
        if (layout.node_of[static_cast<std::size_t>(order[i])] !=
            layout.node_of[static_cast<std::size_t>(order[first])])
            return false;
    }
    return true;
}

} // namespace ringscale::comm
