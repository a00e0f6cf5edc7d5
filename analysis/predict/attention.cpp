#include "attention.hpp"

#include "src/base/checked_count.hpp"
#include "src/base/error.hpp"
#include "src/base/shape_rules.hpp"

namespace ringscale::analysis::predict {

namespace {

/// Pairs between two contiguous runs of m tokens that start at chunk indices qc and kc
/// (chunks of m tokens): all when the keys come first, m(m+1)/2 on the diagonal, else 0.
double chunk_pairs(double m, double qc, double kc) {
    if (kc < qc)
        return m * m;
    if (kc == qc)
        return m * (m + 1) / 2;
    return 0;
}

} // namespace

double visible_pairs(const std::string& layout, double seq_len, int ranks, int a, int b,
                     bool causal) {
    const double p = ranks;
    if (!causal) {
        const double n = seq_len / p;
        return n * n;
    }
    if (layout == "zigzag") {
        const double m = seq_len / (2 * p);
        const double qa[2] = {static_cast<double>(a), 2 * p - 1 - a};
        const double kb[2] = {static_cast<double>(b), 2 * p - 1 - b};
        double s = 0;
        for (double q : qa)
            for (double k : kb)
                s += chunk_pairs(m, q, k);
        return s;
    }
    if (layout == "striped") { // key j*P+b visible to query i*P+a when j < i, or j == i, b <= a
        const double n = seq_len / p;
        return n * (n - 1) / 2 + (b <= a ? n : 0);
    }
    return chunk_pairs(seq_len / p, a, b); // contiguous
}

double group_pairs(const attention_problem& a, int ranks, int u, int qg, int kg) {
    if (u == ranks) { // one group holds the whole sequence
        const double s = a.seq_len;
        return a.causal ? s * (s + 1) / 2 : s * s;
    }
    // Groups of u consecutive ranks hold, under contiguous and zigzag, exactly what one rank
    // of the same layout over P/u ranks would: u adjacent chunks make one chunk u times larger.
    const int groups = ranks / u;
    if (a.layout != "striped" || !a.causal)
        return visible_pairs(a.layout, a.seq_len, groups, qg, kg, a.causal);
    // Striped: residues qg*u.. against kg*u..; each rank pair sees n(n-1)/2 + n [b <= a].
    const double n = a.seq_len / ranks, uu = u;
    const double below = kg < qg ? uu * uu : kg == qg ? uu * (uu + 1) / 2 : 0;
    return uu * uu * n * (n - 1) / 2 + n * below;
}

work block_forward(const attention_problem& a, double q_rows, double k_rows, double pairs,
                   double heads, double kv_heads) {
    if (pairs <= 0)
        return {};
    work w;
    w.attn_flop = 4 * a.batch * heads * a.head_dim * pairs;
    w.mem_bytes = a.batch * a.head_dim * (heads * q_rows + 2 * kv_heads * k_rows) * a.elem_bytes;
    w.calls = a.block_calls;
    return w;
}

work block_backward(const attention_problem& a, double q_rows, double k_rows, double pairs,
                    double heads, double kv_heads) {
    work w = block_forward(a, q_rows, k_rows, pairs, heads, kv_heads);
    w.attn_flop *= 2.5;
    w.mem_bytes *= 2;
    return w;
}

work memory_pass(double bytes) {
    work w;
    w.mem_bytes = 2 * bytes;
    return w;
}

double kv_block_bytes(const attention_problem& a, double rows, double kv_heads) {
    return a.batch * kv_heads * rows * a.head_dim * a.elem_bytes;
}

std::string layout_refusal(const attention_problem& a, int ranks) {
    try { // the launch's own rule and words (src/base/shape_rules.hpp)
        rules::check_layout_chunks(
            a.layout, whole_in_range(a.seq_len, 0, rules::max_seq_len, "seq_len"), ranks);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

} // namespace ringscale::analysis::predict
