#include "schemes.hpp"

#include "links.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <vector>

namespace ringscale::analysis::predict {

namespace {

/// Ranks whose step is evaluated: `only` when set; else all of them up to 64, else the first,
/// middle and last (the layouts' slowest ranks are the last (contiguous) or any (balanced
/// zigzag and striped)).
std::vector<int> candidates(int n, int only = -1) {
    std::vector<int> out;
    if (only >= 0)
        return {only};
    if (n <= 64) {
        for (int i = 0; i < n; ++i)
            out.push_back(i);
        return out;
    }
    for (int i : {0, n / 2, n - 1})
        out.push_back(i);
    return out;
}

/// A ring over `degree` ring ranks, each a group of u consecutive ranks (u = 1: plain ring).
struct ring_geom {
    int ranks = 1, u = 1, degree = 1;
    double heads = 0, kv_heads = 0, rows = 0; ///< per ring rank
    link_level level = link_level::intra;
    int flows = 1; ///< a hop's concurrent flows per node across nodes (links.hpp)
};

double ring_pairs(const attention_problem& a, const ring_geom& g, int q, int k) {
    return g.u == 1 ? visible_pairs(a.layout, a.seq_len, g.ranks, q, k, a.causal)
                    : group_pairs(a, g.ranks, g.u, q, k);
}

cost ring_forward(const attention_problem& a, const ring_geom& g, int me, const figures& f,
                  double width) {
    const double out = a.batch * g.heads * g.rows * (a.head_dim + 1) * 4; // O and LSE, fp32
    cost t = compute_cost(memory_pass(out / 2), f.compute, width);
    const cost x_kv = shared_inter(
        coll_cost(coll::sendrecv, 2 * kv_block_bytes(a, g.rows, g.kv_heads), g.degree, g.level, f),
        g.flows, f);
    for (int s = 0; s < g.degree; ++s) {
        const int src = (me - s % g.degree + g.degree) % g.degree;
        const cost c = compute_cost(
            block_forward(a, g.rows, g.rows, ring_pairs(a, g, me, src), g.heads, g.kv_heads),
            f.compute, width);
        if (s == g.degree - 1)
            t += c;
        else if (a.overlap)
            t += longer(c, x_kv);
        else
            t += c + x_kv;
    }
    return t;
}

cost ring_backward(const attention_problem& a, const ring_geom& g, int me, const figures& f,
                   double width) {
    const double q = a.batch * g.heads * g.rows * a.head_dim * 4;
    const double grad = 2 * a.batch * g.kv_heads * g.rows * a.head_dim * 4; // dK|dV, fp32
    cost t = compute_cost(memory_pass(2 * q), f.compute, width);            // delta, zero dQ
    const cost x_kv = shared_inter(
        coll_cost(coll::sendrecv, 2 * kv_block_bytes(a, g.rows, g.kv_heads), g.degree, g.level, f),
        g.flows, f);
    const cost x_dkv =
        shared_inter(coll_cost(coll::sendrecv, grad, g.degree, g.level, f), g.flows, f);
    const cost sum = compute_cost(memory_pass(2 * grad), f.compute, width); // zero, add
    for (int s = 0; s < g.degree; ++s) {
        const int src = (me - s % g.degree + g.degree) % g.degree;
        cost step = compute_cost(block_backward(a, g.rows, g.rows, ring_pairs(a, g, me, src),
                                                g.heads, g.kv_heads),
                                 f.compute, width) +
                    sum;
        if (!a.overlap) {
            t += step + x_dkv + (s < g.degree - 1 ? x_kv : cost{});
            continue;
        }
        if (s < g.degree - 1)
            step = longer(step, x_kv);
        if (s > 0)
            step = longer(step, x_dkv);
        t += step;
    }
    if (a.overlap)
        t += x_dkv; // the last partial sum's hop home
    return t;
}

cost ring_step(const attention_problem& a, const ring_geom& g, const figures& f, double width,
               int only) {
    cost worst;
    for (int me : candidates(g.degree, only)) {
        cost t = ring_forward(a, g, me, f, width);
        if (a.backward)
            t += ring_backward(a, g, me, f, width);
        worst = longer(worst, t);
    }
    return worst;
}

cost allgather_rank(const attention_problem& a, const placement& w, int me, const figures& f,
                    double width) {
    const int p = w.world;
    const double rows = a.seq_len / p;
    auto block = [&](int src, bool bwd) {
        const double pairs = visible_pairs(a.layout, a.seq_len, p, me, src, a.causal);
        return compute_cost(bwd ? block_backward(a, rows, rows, pairs, a.heads, a.kv_heads)
                                : block_forward(a, rows, rows, pairs, a.heads, a.kv_heads),
                            f.compute, width);
    };
    const double q = a.batch * a.heads * rows * a.head_dim * 4;
    cost t = compute_cost(memory_pass(q / 2), f.compute, width);
    const double gathered = 2 * kv_block_bytes(a, rows, a.kv_heads) * p;
    t +=
        longer(block(me, false), placed_coll_cost(coll::allgather, gathered, p, w.ranks_per_node, f,
                                                  mpi_call::nonblocking)); // the job's iall_gather
    for (int s = 1; s < p; ++s)
        t += block((me - s + p) % p, false);
    if (!a.backward)
        return t;
    const double grad = 2 * a.batch * a.kv_heads * rows * a.head_dim * 4;
    const cost x = coll_cost(coll::sendrecv, grad, p, ring_level(w), f);
    const cost sum = compute_cost(memory_pass(2 * grad), f.compute, width);
    t += compute_cost(memory_pass(2 * q), f.compute, width);
    for (int s = 0; s < p; ++s) {
        const cost c = block(((me - s - 1) % p + p) % p, true);
        t += (s == 0 ? c : longer(c, x)) + sum;
    }
    return t;
}

/// One pass's two Ulysses exchanges: `in` bytes per rank to heads, `out` bytes back.
cost ulysses_exchanges(double in, double out, int u, const placement& w, const figures& f,
                       double width) {
    if (u <= 1)
        return {};
    // Inside nodes a group has min(u, ranks per node) ranks on a node, all of them crossing;
    // spread over N nodes it has u / N (at least 1) on each, while every rank of the node
    // crosses at once in its own group's exchange.
    const bool across = w.groups_across && w.nodes > 1;
    const int per_node = across ? std::max(1, u / w.nodes) : std::min(u, w.ranks_per_node);
    const int flows = across ? w.ranks_per_node : per_node;
    cost t = compute_cost(memory_pass(2 * (in + out)), f.compute, width); // pack and unpack
    t += alltoall_cost(in, u, per_node, f, flows);
    t += alltoall_cost(out, u, per_node, f, flows);
    return t;
}

std::string ulysses_refusal(const attention_problem& a, int u, int p) {
    if (u < 1 || p % u != 0)
        return fmt::format("Ulysses degree {} does not divide P={}", u, p);
    if (std::fmod(a.heads, u) != 0 || std::fmod(a.kv_heads, u) != 0 || a.kv_heads < u)
        return fmt::format("heads {:g} and kv_heads {:g} must divide by the Ulysses degree {}",
                           a.heads, a.kv_heads, u);
    return "";
}

/// The case's total compute over P ranks (one rank's whole problem, divided).
double ideal_seconds(const attention_problem& a, int p, const figures& f, double width) {
    const double pairs = a.causal ? a.seq_len * (a.seq_len + 1) / 2 : a.seq_len * a.seq_len;
    work w = block_forward(a, a.seq_len, a.seq_len, pairs, a.heads, a.kv_heads);
    if (a.backward)
        w += block_backward(a, a.seq_len, a.seq_len, pairs, a.heads, a.kv_heads);
    w.calls = 0;
    return compute_cost(w * (1.0 / p), f.compute, width).total();
}

} // namespace

link_level ring_level(const placement& where) {
    return where.nodes > 1 ? link_level::inter : link_level::intra;
}

int ulysses_degree(const std::string& variant, int requested, const placement& where,
                   const attention_problem& a) {
    const int ranks = where.world;
    if (variant == "allgather" || variant == "ring")
        return 1;
    if (variant == "ulysses")
        return ranks;
    if (requested > 0)
        return requested;
    int u = 1;
    if (where.nodes <= 1) {
        for (int d = 1; static_cast<long long>(d) * d <= ranks; ++d)
            if (ranks % d == 0)
                u = d;
        return u;
    }
    for (int d = 1; d <= where.ranks_per_node; ++d)
        if (where.ranks_per_node % d == 0 && ranks % d == 0 && std::fmod(a.heads, d) == 0 &&
            std::fmod(a.kv_heads, d) == 0 && a.kv_heads >= d)
            u = d;
    return u;
}

step_prediction predict_attention(const std::string& scheme, int requested_u,
                                  const attention_problem& problem, const placement& where,
                                  const figures& f, double width, int only_rank) {
    attention_problem a = problem;
    a.block_calls = f.gpu ? 1 : 0;
    step_prediction out;
    const int p = where.world;
    const int u = ulysses_degree(scheme, requested_u, where, a);
    out.label = scheme == "hybrid" ? fmt::format("hybrid/u{}", u) : scheme;
    out.memory_kind = f.gpu ? "device" : "host";
    out.refusal = layout_refusal(a, p);
    if (out.refusal.empty() && (scheme == "ulysses" || scheme == "hybrid"))
        out.refusal = ulysses_refusal(a, u, p);
    if (!out.ok())
        return out;
    out.memory_bytes = attention_memory(scheme, u, a, p);
    out.ideal_s = ideal_seconds(a, p, f, width);
    if (scheme == "allgather") {
        for (int me : candidates(p, only_rank))
            out.time = longer(out.time, allgather_rank(a, where, me, f, width));
        return out;
    }
    ring_geom g;
    g.ranks = p;
    g.u = u;
    g.degree = p / u;
    g.heads = a.heads / u;
    g.kv_heads = a.kv_heads / u;
    g.rows = a.seq_len / p * u;
    g.level = ring_level(where);
    // Group k's rank i sends to group k+1's rank i: min(u, ranks per node) flows leave a node.
    g.flows = std::min(u, where.ranks_per_node);
    if (where.groups_across && where.nodes > 1) {
        // Position p (local index x nodes + node) sends to p + u: to another node, every rank
        // of the node at once, unless u is a multiple of the nodes (then to its own node).
        g.level = u % where.nodes == 0 ? link_level::intra : link_level::inter;
        g.flows = where.ranks_per_node;
    }
    out.time = ring_step(a, g, f, width, only_rank < 0 ? -1 : only_rank / u);
    const double row = a.batch * a.seq_len / p * a.head_dim; // one head's rows on one rank
    out.time += ulysses_exchanges((a.heads + 2 * a.kv_heads) * row * a.elem_bytes,
                                  a.heads * row * 4, u, where, f, width);
    if (a.backward)
        out.time += ulysses_exchanges(a.heads * row * a.elem_bytes,
                                      (a.heads + 2 * a.kv_heads) * row * 4, u, where, f, width);
    return out;
}

double attention_memory(const std::string& scheme, int u, const attention_problem& a, int p) {
    const double rows = a.seq_len / p;
    const double q = a.batch * a.heads * rows * a.head_dim;
    const double kv = a.batch * a.kv_heads * rows * a.head_dim;
    const double e = a.elem_bytes, fl = 4;
    const int bwd = a.backward ? 1 : 0;
    if (scheme == "ring") { // jobs/ring_attention.cpp and ring_core.cpp's buffers
        double bytes = e * (q + 2 * kv) + fl * (q + q / a.head_dim);     // Q, own K|V; O, LSE
        bytes += p > 1 ? 2 * e * 2 * kv : 0;                             // two ring buffers
        bytes += bwd * (e * q + fl * (q + q / a.head_dim + 3 * 2 * kv)); // dO; dQ, delta, dK|dV x3
        return bytes;
    }
    const double kv2 = 2 * kv; // jobs/context_parallel.cpp cp_bytes_per_rank
    double floats = 2 * q + kv2 + bwd * (2 * q + kv2);
    if (scheme == "allgather") {
        floats += p * kv2 + bwd * 3 * kv2;
    } else {
        const double ring = p / u > 1 ? 1 : 0;
        floats += 2 * q + kv2 + 2 * (q + 2 * kv2) + ring * 2 * kv2;
        floats += bwd * (2 * q + kv2 + ring * 2 * kv2);
    }
    return floats * fl;
}

} // namespace ringscale::analysis::predict
