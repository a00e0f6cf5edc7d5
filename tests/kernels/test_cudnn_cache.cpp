// The cuDNN graph cache (kernels/cudnn_cache.hpp), no GPU: a stand-in graph counts builds.
// Two shapes never share a graph; the same shape never builds twice; the cache stays within
// its bound, the least recently used graph leaving first.
#include "kernels/cudnn_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

using namespace ringscale::kernels;

namespace {

struct fake_graph {
    cudnn_graph_key key;
};

struct counter {
    int builds = 0;
    double now = 0;
};

std::shared_ptr<fake_graph> get(cudnn_graph_cache<fake_graph>& cache, counter& n,
                                const cudnn_graph_key& key) {
    return cache.get(
        key,
        [&] {
            ++n.builds;
            return std::make_shared<fake_graph>(fake_graph{key});
        },
        [&] { return n.now += 0.5; });
}

// Keys that differ in one attribute each.
std::vector<cudnn_graph_key> distinct_keys() {
    const cudnn_call call{0, 128, 0, 256, {cudnn_align::bottom_right, 0, 0}};
    const cudnn_graph_key base =
        make_cudnn_graph_key(false, attn_dtype_kind::bf16, 1, 16, 16, 128, 256, 256, call, 0.088f);
    std::vector<cudnn_graph_key> keys(16, base);
    keys[1].backward = true;
    keys[2].dtype = attn_dtype_kind::fp16;
    keys[3].batch = 2;
    keys[4].heads = 32;
    keys[5].kv_heads = 4;
    keys[6].head_dim = 64;
    keys[7].q_len = 64;
    keys[8].k_len = 128;
    keys[9].q_rows = 512;
    keys[10].k_rows = 512;
    keys[11].band.align = cudnn_align::top_left;
    keys[12].band.left = 100;
    keys[13].band.right = -1;
    keys[14].scale_bits ^= 1u;
    keys[15].dtype = attn_dtype_kind::fp8;
    return keys;
}

} // namespace

TEST(cudnn_cache, two_shapes_never_share_a_graph) {
    const auto keys = distinct_keys();
    std::set<cudnn_graph_key> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), keys.size());
    cudnn_graph_cache<fake_graph> cache(64);
    counter n;
    std::set<const fake_graph*> graphs;
    for (const auto& k : keys) {
        const auto g = get(cache, n, k);
        EXPECT_TRUE(g->key == k);
        graphs.insert(g.get());
    }
    EXPECT_EQ(graphs.size(), keys.size());
    EXPECT_EQ(n.builds, static_cast<int>(keys.size()));
}

TEST(cudnn_cache, the_same_shape_never_builds_twice) {
    const auto keys = distinct_keys();
    cudnn_graph_cache<fake_graph> cache(64);
    counter n;
    for (int round = 0; round < 3; ++round)
        for (const auto& k : keys)
            get(cache, n, k);
    EXPECT_EQ(n.builds, static_cast<int>(keys.size()));
    EXPECT_EQ(cache.stats().builds, keys.size());
    EXPECT_EQ(cache.stats().hits, 2 * keys.size());
    // Build time is counted only for builds (0.5 s per build by the stand-in clock).
    EXPECT_DOUBLE_EQ(cache.stats().build_s, 0.5 * static_cast<double>(keys.size()));
}

TEST(cudnn_cache, bounded_and_least_recently_used_first_out) {
    const auto keys = distinct_keys();
    cudnn_graph_cache<fake_graph> cache(4);
    counter n;
    for (const auto& k : keys) {
        get(cache, n, k);
        EXPECT_LE(cache.size(), 4u);
    }
    EXPECT_EQ(cache.stats().evictions, keys.size() - 4);
    // keys[12..15] are cached; touching 12 keeps it when 0 comes back and 13 leaves.
    get(cache, n, keys[12]);
    const int before = n.builds;
    get(cache, n, keys[0]);
    EXPECT_EQ(n.builds, before + 1);
    get(cache, n, keys[12]);
    EXPECT_EQ(n.builds, before + 1);
    get(cache, n, keys[13]);
    EXPECT_EQ(n.builds, before + 2);
}
