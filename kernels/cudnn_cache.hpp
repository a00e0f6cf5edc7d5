// The cuDNN graphs' cache: a graph is built once per call shape (every attribute that changes
// the graph is in the key: direction, dtype, sizes, the parent tensors' strides, the band, the
// softmax scale) and kept in a bounded cache, least recently used first out. Pure host code:
// the graph type is a parameter, so the tests use a stand-in and count builds.
#pragma once

#include "kernels/cudnn_plan.hpp"
#include "kernels/cudnn_support.hpp"

#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace ringscale::kernels {

/// Everything that makes two cuDNN SDPA graphs differ. q_rows and k_rows are the rows of the
/// tensors the call's pieces sit in (their strides), q_len and k_len the call's own.
struct cudnn_graph_key {
    bool backward = false;
    attn_dtype_kind dtype = attn_dtype_kind::bf16;
    std::int64_t batch = 0, heads = 0, kv_heads = 0, head_dim = 0;
    std::int64_t q_len = 0, k_len = 0, q_rows = 0, k_rows = 0;
    cudnn_band band;
    std::uint32_t scale_bits = 0; ///< the softmax scale's float bits

    auto tie() const {
        return std::tie(backward, dtype, batch, heads, kv_heads, head_dim, q_len, k_len, q_rows,
                        k_rows, band.align, band.left, band.right, scale_bits);
    }
    bool operator<(const cudnn_graph_key& o) const { return tie() < o.tie(); }
    bool operator==(const cudnn_graph_key& o) const { return tie() == o.tie(); }
};

/// The key of a call of `plan` for tensors of q_rows x k_rows rows.
inline cudnn_graph_key make_cudnn_graph_key(bool backward, attn_dtype_kind dtype,
                                            std::int64_t batch, std::int64_t heads,
                                            std::int64_t kv_heads, std::int64_t head_dim,
                                            std::int64_t q_rows, std::int64_t k_rows,
                                            const cudnn_call& call, float scale) {
    cudnn_graph_key k;
    k.backward = backward;
    k.dtype = dtype;
    k.batch = batch;
    k.heads = heads;
    k.kv_heads = kv_heads;
    k.head_dim = head_dim;
    k.q_len = call.q_len;
    k.k_len = call.k_len;
    k.q_rows = q_rows;
    k.k_rows = k_rows;
    k.band = call.band;
    std::memcpy(&k.scale_bits, &scale, sizeof scale);
    return k;
}

/// Builds, hits and evictions of a cache so far.
struct cudnn_cache_stats {
    std::uint64_t builds = 0, hits = 0, evictions = 0;
    double build_s = 0; ///< seconds spent building graphs (a set-up cost, outside timed work)
};

/// A bounded least-recently-used cache of graphs (shared_ptr<Graph>), keyed by
/// cudnn_graph_key. Not synchronised: one per thread, or guarded by the caller.
template <typename Graph>
class cudnn_graph_cache {
  public:
    explicit cudnn_graph_cache(std::size_t capacity) : m_capacity(capacity ? capacity : 1) {}

    /// The graph of `key`, built by `build()` (returning shared_ptr<Graph>) only when absent;
    /// the least recently used graph leaves when the cache is full. `seconds()` times a build.
    template <typename Build, typename Clock>
    std::shared_ptr<Graph> get(const cudnn_graph_key& key, Build&& build, Clock&& seconds) {
        auto it = m_index.find(key);
        if (it != m_index.end()) {
            ++m_stats.hits;
            m_order.splice(m_order.begin(), m_order, it->second);
            return it->second->second;
        }
        const double t0 = seconds();
        std::shared_ptr<Graph> graph = build();
        m_stats.build_s += seconds() - t0;
        ++m_stats.builds;
        if (m_order.size() == m_capacity) {
            m_index.erase(m_order.back().first);
            m_order.pop_back();
            ++m_stats.evictions;
        }
        m_order.emplace_front(key, graph);
        m_index[key] = m_order.begin();
        return graph;
    }

    std::size_t size() const { return m_order.size(); }
    std::size_t capacity() const { return m_capacity; }
    const cudnn_cache_stats& stats() const { return m_stats; }

  private:
    using entry = std::pair<cudnn_graph_key, std::shared_ptr<Graph>>;
    std::size_t m_capacity;
    std::list<entry> m_order; // most recently used first
    std::map<cudnn_graph_key, typename std::list<entry>::iterator> m_index;
    cudnn_cache_stats m_stats;
};

} // namespace ringscale::kernels
