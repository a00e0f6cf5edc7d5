// The node layout and the group orders of comm/topology, on layouts given by hand (pure), and
// the layout detected over MPI (one host here: one node of every rank).
#include "comm/topology.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::comm;

TEST(topology, layouts_by_hand) {
    const node_layout b = node_layout::blocks(2, 3);
    EXPECT_EQ(b.node_of, (std::vector<int>{0, 0, 0, 1, 1, 1}));
    EXPECT_EQ(b.nodes(), 2);
    EXPECT_EQ(b.ranks_per_node(), 3);
    EXPECT_TRUE(b.uniform());
    EXPECT_EQ(b.local_index(4), 1);
    EXPECT_EQ(b.describe(), "2 nodes x 3 ranks");
    const node_layout rr = node_layout::round_robin(2, 4);
    EXPECT_EQ(rr.node_of, (std::vector<int>{0, 1, 0, 1}));
    EXPECT_EQ(rr.local_index(2), 1);
    const node_layout one = node_layout{}.for_world(4);
    EXPECT_EQ(one.nodes(), 1);
    EXPECT_EQ(one.ranks_per_node(), 4);
    EXPECT_EQ(one.describe(), "1 node x 4 ranks");
    EXPECT_EQ(node_layout{}.nodes(), 1);
}

TEST(topology, uneven_layout_records_the_most_ranks_per_node) {
    const node_layout l = layout_of_hosts({5, 5, 2});
    EXPECT_EQ(l.node_of, (std::vector<int>{0, 0, 1}));
    EXPECT_EQ(l.ranks_per_node(), 2);
    EXPECT_FALSE(l.uniform());
    EXPECT_EQ(l.describe(), "2 nodes of 2, 1 ranks");
}

TEST(topology, node_order_keeps_groups_inside_nodes_whatever_the_mapping) {
    // Round robin: ranks 0, 2 on node 0 and 1, 3 on node 1.
    const node_layout rr = node_layout::round_robin(2, 4);
    const auto order = group_order(rr, group_placement::node);
    EXPECT_EQ(order, (std::vector<int>{0, 2, 1, 3}));
    EXPECT_TRUE(groups_inside_nodes(rr, order, 2));
    EXPECT_FALSE(groups_inside_nodes(rr, order, 4));
    EXPECT_EQ(positions_of(order), (std::vector<int>{0, 2, 1, 3}));
    // Block mapping: the node order is rank order.
    const node_layout b = node_layout::blocks(2, 2);
    EXPECT_EQ(group_order(b, group_placement::node), (std::vector<int>{0, 1, 2, 3}));
}

TEST(topology, across_order_spreads_groups_over_nodes) {
    const node_layout b = node_layout::blocks(4, 2);
    const auto order = group_order(b, group_placement::across);
    EXPECT_EQ(order, (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
    EXPECT_FALSE(groups_inside_nodes(b, order, 2));
    // One node: rank order either way.
    const node_layout one = node_layout::single(3);
    EXPECT_EQ(group_order(one, group_placement::across), (std::vector<int>{0, 1, 2}));
}

TEST(topology, group_size_that_does_not_tile_a_node_spans_two) {
    const node_layout b = node_layout::blocks(2, 3);
    EXPECT_TRUE(groups_inside_nodes(b, group_order(b, group_placement::node), 3));
    EXPECT_FALSE(groups_inside_nodes(b, group_order(b, group_placement::node), 2));
}

TEST(topology, placement_names) {
    EXPECT_EQ(parse_group_placement("across", "cp-placement"), group_placement::across);
    EXPECT_STREQ(to_string(group_placement::node), "node");
    EXPECT_THROW(parse_group_placement("diagonal", "cp-placement"), config_error);
}
