// The single-rank attention of the training step through the attention kernels
// (kernels/kernels.hpp): on the CPU the fp32 flash-attention kernels in one call each, on
// CUDA the tensor-core kernels reading bf16 Q, K, V, dO.
#include "kernels/model/attention_core.hpp"

#include <algorithm>
#include <random>

namespace ringscale::kernels::model {

elem attention_input_type(executor& exec) {
    return attention_supports(exec, elem::f32) ? elem::f32 : elem::bf16;
}

const void* attention_input(executor& exec, elem e, const float* src, std::size_t n,
                            dev_buffer<unsigned char>& buf) {
    if (e == elem::f32)
        return src;
    const std::size_t bytes = n * elem_bytes(e);
    if (buf.size() < bytes)
        buf.allocate(exec, bytes);
    convert(exec, e, n, src, buf.data());
    return buf.data();
}

local_attention_core::local_attention_core(executor& exec, std::vector<std::int64_t> positions)
    : m_exec(exec), m_pos(exec, std::move(positions)), m_elem(attention_input_type(exec)) {}

void local_attention_core::forward(const attention_shape& s, const float* q, const float* kv,
                                   float* o, float* lse, phase_timer& timer) {
    phase_scope compute(m_exec, timer, phase::compute);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto* qi = static_cast<const unsigned char*>(attention_input(m_exec, m_elem, q, qe, m_q));
    const auto* kvi =
        static_cast<const unsigned char*>(attention_input(m_exec, m_elem, kv, 2 * kve, m_kv));
    const row_positions pos = m_pos.view();
    if (reordered())
        return forward_blocks(s, qi, kvi, o, lse);
    attention_fwd_init(m_exec, s, o, lse);
    attention_fwd(m_exec, s, m_elem, qi, kvi, kvi + kve * elem_bytes(m_elem), pos, pos, o, lse,
                  attention_split::whole, {});
}

void local_attention_core::backward(const attention_shape& s, const float* q, const float* kv,
                                    const float* o, const float* d_o, const float* lse, float* dq,
                                    float* dkv, phase_timer& timer) {
    phase_scope compute(m_exec, timer, phase::compute);
    const auto qe = static_cast<std::size_t>(attention_q_elems(s));
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    if (m_delta.size() < rows)
        m_delta.allocate(m_exec, rows);
    const auto* qi = static_cast<const unsigned char*>(attention_input(m_exec, m_elem, q, qe, m_q));
    const auto* kvi =
        static_cast<const unsigned char*>(attention_input(m_exec, m_elem, kv, 2 * kve, m_kv));
    const void* doi = attention_input(m_exec, m_elem, d_o, qe, m_do);
    const row_positions pos = m_pos.view();
    m_exec.zero(dq, qe * sizeof(float));
    m_exec.zero(dkv, 2 * kve * sizeof(float));
    if (reordered())
        return backward_blocks(s, o, qi, kvi, doi, lse, dq, dkv);
    attention_bwd_delta(m_exec, s, m_elem, o, doi, m_delta.data());
    attention_bwd(m_exec, s, m_elem, qi, kvi, kvi + kve * elem_bytes(m_elem), doi, lse,
                  m_delta.data(), pos, pos, dq, dkv, dkv + kve, attention_split::whole, {});
}

bool local_attention_core::reordered() const {
    return m_reorder_seed != 0;
}

std::vector<std::pair<std::int64_t, std::int64_t>>
local_attention_core::key_blocks(std::int64_t rows) {
    std::mt19937_64 rng(m_reorder_seed * 0x9e3779b97f4a7c15ull + ++m_reorder_calls);
    const std::int64_t n = std::min<std::int64_t>(rows, 2 + static_cast<std::int64_t>(rng() % 3));
    std::vector<std::int64_t> cuts = {0, rows};
    while (static_cast<std::int64_t>(cuts.size()) < n + 1) { // n - 1 distinct inner cuts
        const auto c = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows - 1));
        if (std::find(cuts.begin(), cuts.end(), c) == cuts.end())
            cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
        blocks.emplace_back(cuts[i], cuts[i + 1]);
    for (std::size_t i = blocks.size(); i > 1; --i) // Fisher-Yates, portable
        std::swap(blocks[i - 1], blocks[static_cast<std::size_t>(rng() % i)]);
    return blocks;
}

namespace {

using block = std::pair<std::int64_t, std::int64_t>;

// `buf` grown to at least `n` elements on `exec` (its contents dropped when it grows).
template <class T>
T* at_least(executor& exec, dev_buffer<T>& buf, std::size_t n) {
    if (buf.size() < n)
        buf.allocate(exec, n);
    return buf.data();
}

// Rows [b.first, b.second) of each of `outer` slabs of `rows` rows of `row_bytes` in `src`,
// packed into `dst`: one asynchronous copy per slab on exec's compute stream.
void gather_rows(executor& exec, const void* src, void* dst, std::int64_t outer, std::int64_t rows,
                 block b, std::size_t row_bytes) {
    const auto n = static_cast<std::size_t>(b.second - b.first) * row_bytes;
    for (std::int64_t i = 0; i < outer; ++i)
        exec.copy(static_cast<unsigned char*>(dst) + static_cast<std::size_t>(i) * n,
                  static_cast<const unsigned char*>(src) +
                      static_cast<std::size_t>(i * rows + b.first) * row_bytes,
                  n);
}

// The inverse: the packed fp32 `part` added into those rows of `dst` (`width` floats a row),
// one add kernel per slab.
void add_rows(executor& exec, const float* part, float* dst, std::int64_t outer, std::int64_t rows,
              block b, std::size_t width) {
    const auto n = static_cast<std::size_t>(b.second - b.first) * width;
    for (std::int64_t i = 0; i < outer; ++i) {
        float* d = dst + static_cast<std::size_t>(i * rows + b.first) * width;
        add(exec, n, d, part + static_cast<std::size_t>(i) * n, d);
    }
}

} // namespace

void local_attention_core::forward_blocks(const attention_shape& s, const unsigned char* q,
                                          const unsigned char* kv, float* o, float* lse) {
    const std::size_t eb = elem_bytes(m_elem), row = static_cast<std::size_t>(s.head_dim) * eb;
    const std::int64_t outer = s.batch * s.kv_heads;
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const std::vector<std::int64_t>& all = m_pos.host();
    attention_fwd_init(m_exec, s, o, lse);
    for (const block& b : key_blocks(s.k_len)) {
        attention_shape sb = s;
        sb.k_len = b.second - b.first;
        const auto bytes = static_cast<std::size_t>(outer * sb.k_len) * row;
        unsigned char* k = at_least(m_exec, m_block_k, bytes);
        unsigned char* v = at_least(m_exec, m_block_v, bytes);
        gather_rows(m_exec, kv, k, outer, s.k_len, b, row);
        gather_rows(m_exec, kv + kve * eb, v, outer, s.k_len, b, row);
        const dev_positions kp(m_exec, {all.begin() + b.first, all.begin() + b.second});
        attention_fwd(m_exec, sb, m_elem, q, k, v, m_pos.view(), kp.view(), o, lse,
                      attention_split::whole, {});
    }
}

// Query blocks in a random order, each against the key blocks in a random order: dQ sums over
// key blocks, dK and dV over query blocks, each in its own order (a ring's partial sums). A
// query block's delta comes from its own O and dO rows (the same per-row sums as the whole
// call's), so a backend that keeps O for the backward (cuDNN) keeps the block's.
void local_attention_core::backward_blocks(const attention_shape& s, const float* o,
                                           const unsigned char* q, const unsigned char* kv,
                                           const void* d_o, const float* lse, float* dq,
                                           float* dkv) {
    const auto d = static_cast<std::size_t>(s.head_dim);
    const std::size_t eb = elem_bytes(m_elem), row = d * eb;
    const std::int64_t kv_outer = s.batch * s.kv_heads, q_outer = s.batch * s.heads;
    const auto kve = static_cast<std::size_t>(attention_kv_elems(s));
    const std::vector<std::int64_t>& all = m_pos.host();
    for (const block& qb : key_blocks(s.q_len)) {
        attention_shape sq = s;
        sq.q_len = qb.second - qb.first;
        const auto qn = static_cast<std::size_t>(q_outer * sq.q_len); // the block's rows
        unsigned char* bq = at_least(m_exec, m_block_q, qn * row);
        unsigned char* bdo = at_least(m_exec, m_block_do, qn * row);
        float* bo = at_least(m_exec, m_block_o, qn * d);
        float* blse = at_least(m_exec, m_block_lse, qn);
        float* bdelta = at_least(m_exec, m_block_delta, qn);
        float* bdq = at_least(m_exec, m_block_dq, qn * d);
        gather_rows(m_exec, q, bq, q_outer, s.q_len, qb, row);
        gather_rows(m_exec, d_o, bdo, q_outer, s.q_len, qb, row);
        gather_rows(m_exec, o, bo, q_outer, s.q_len, qb, d * sizeof(float));
        gather_rows(m_exec, lse, blse, q_outer, s.q_len, qb, sizeof(float));
        attention_bwd_delta(m_exec, sq, m_elem, bo, bdo, bdelta);
        m_exec.zero(bdq, qn * d * sizeof(float));
        const dev_positions qp(m_exec, {all.begin() + qb.first, all.begin() + qb.second});
        for (const block& kb : key_blocks(s.k_len)) {
            attention_shape sb = sq;
            sb.k_len = kb.second - kb.first;
            const auto kn = static_cast<std::size_t>(kv_outer * sb.k_len);
            unsigned char* bk = at_least(m_exec, m_block_k, kn * row);
            unsigned char* bv = at_least(m_exec, m_block_v, kn * row);
            float* bdk = at_least(m_exec, m_block_dk, kn * d);
            float* bdv = at_least(m_exec, m_block_dv, kn * d);
            gather_rows(m_exec, kv, bk, kv_outer, s.k_len, kb, row);
            gather_rows(m_exec, kv + kve * eb, bv, kv_outer, s.k_len, kb, row);
            m_exec.zero(bdk, kn * d * sizeof(float));
            m_exec.zero(bdv, kn * d * sizeof(float));
            const dev_positions kp(m_exec, {all.begin() + kb.first, all.begin() + kb.second});
            attention_bwd(m_exec, sb, m_elem, bq, bk, bv, bdo, blse, bdelta, qp.view(), kp.view(),
                          bdq, bdk, bdv, attention_split::whole, {});
            add_rows(m_exec, bdk, dkv, kv_outer, s.k_len, kb, d);
            add_rows(m_exec, bdv, dkv + kve, kv_outer, s.k_len, kb, d);
        }
        add_rows(m_exec, bdq, dq, q_outer, s.q_len, qb, d);
    }
}

} // namespace ringscale::kernels::model
