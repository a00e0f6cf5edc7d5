#include "train.hpp"

#include "links.hpp"

#include "src/base/checked_count.hpp"
#include "src/base/error.hpp"
#include "src/base/shape_rules.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ringscale::analysis::predict {

namespace {

int unit_count(const train_problem& t) {
    return static_cast<int>(t.layers) + 2;
}

double padded(double n, int parts) {
    return std::ceil(n / parts) * parts;
}

double local_tokens(const train_problem& t) {
    return t.tokens / t.dp / t.cp;
}

/// Compute stream and one serial communication channel of one rank; `path` is the critical
/// path by figure (a wait on a collective is charged to that collective's figures).
struct channel_sim {
    double t = 0, comm_free = 0;
    cost path;
    void compute(const cost& c) {
        t += c.total();
        path += c;
    }
    double post(const cost& c) {
        comm_free = std::max(t, comm_free) + c.total();
        return comm_free;
    }
    void wait(double until, const cost& c) {
        if (std::isnan(until)) { // a figure CALIB lacks: keep it, so the step is refused by name
            path += c;
            return;
        }
        if (until <= t)
            return;
        const double tc = c.total();
        path += tc > 0 ? c * ((until - t) / tc) : cost{};
        t = until;
    }
    void blocking(const cost& c) { wait(post(c), c); }
};

attention_problem block_attention(const train_problem& t, bool backward) {
    attention_problem a;
    a.seq_len = t.seq_len;
    a.batch = t.tokens / t.seq_len / t.dp;
    a.heads = t.heads;
    a.kv_heads = t.kv_heads > 0 ? t.kv_heads : t.heads;
    a.head_dim = t.hidden / t.heads;
    a.causal = true;
    a.backward = backward;
    a.layout = "zigzag";
    a.elem_bytes = t.attn_elem_bytes;
    return a;
}

struct unit_costs {
    std::vector<cost> fwd, bwd;
    cost adamw;
};

unit_costs price_units(const train_problem& t, const placement& where, const figures& f,
                       double width) {
    const double tl = local_tokens(t), h = t.hidden, v = t.vocab;
    placement cp_where{t.cp, 1, t.cp};
    if (t.cp > where.ranks_per_node) {
        cp_where.ranks_per_node = where.ranks_per_node;
        cp_where.nodes = t.cp / where.ranks_per_node;
    }
    const cost attn_f =
        predict_attention(t.cp_variant, 0, block_attention(t, false), cp_where, f, width).time;
    const cost attn_fb =
        predict_attention(t.cp_variant, 0, block_attention(t, true), cp_where, f, width).time;
    unit_costs out;
    for (int u = 0; u < unit_count(t); ++u) {
        work fw, bw;
        if (u == 0) { // embedding rows in, their gradient rows added back
            fw = bw = memory_pass(tl * h * 4);
        } else if (u <= t.layers) {
            fw.gemm_flop = block_gemm_flops(t, tl);
            fw.mem_bytes = 4 * tl * h * 16; // norms, GELU, residuals, biases
            fw.calls = 10;
            bw = fw * 2;
        } else { // head: projection to the vocabulary and the cross-entropy
            fw.gemm_flop = 2 * v * h * tl;
            fw.mem_bytes = 4 * tl * (3 * v + 4 * h);
            fw.calls = 4;
            bw = fw;
            bw.gemm_flop *= 2;
        }
        out.fwd.push_back(compute_cost(fw, f.compute, width));
        out.bwd.push_back(compute_cost(bw, f.compute, width));
        if (u >= 1 && u <= t.layers) {
            out.fwd.back() += attn_f;
            out.bwd.back() += attn_fb + attn_f * -1.0;
        }
    }
    const int p = where.world;
    double updated = total_params(t), zeroed = total_params(t);
    if (t.dp_variant == "zero1")
        updated = padded(total_params(t), p) / p;
    if (t.dp_variant == "fsdp") {
        updated = 0;
        for (int u = 0; u < unit_count(t); ++u)
            updated += padded(unit_params(t, u), p) / p;
    }
    work adam; // read p, g, m, v; write p, m, v (fp32); zero the gradients
    adam.mem_bytes = 28 * updated + 4 * zeroed;
    adam.calls = 2;
    out.adamw = compute_cost(adam, f.compute, width);
    return out;
}

cost ddp_step(const train_problem& t, const unit_costs& c, const placement& w, const figures& f) {
    channel_sim sim;
    for (const cost& u : c.fwd)
        sim.compute(u);
    double bucket = 0;
    cost last;
    for (int u = unit_count(t) - 1; u >= 0; --u) {
        sim.compute(c.bwd[static_cast<std::size_t>(u)]);
        bucket += unit_params(t, u);
        if (bucket * 4 >= t.bucket_bytes || u == 0) { // jobs/train_ddp.cpp make_buckets
            last = placed_coll_cost(coll::allreduce, bucket * 4, w.world, w.ranks_per_node, f,
                                    mpi_call::nonblocking); // iallreduce
            sim.post(last);
            bucket = 0;
        }
    }
    sim.wait(sim.comm_free, last);
    sim.compute(c.adamw);
    return sim.path;
}

cost zero1_step(const train_problem& t, const unit_costs& c, const placement& w, const figures& f) {
    // jobs/schemes/zero1.cpp: DDP's buckets, each reduce-scattered once the backward completes
    // it (on the CPU the scheme's ring: P-1 sendrecvs of a piece; on a GPU ireduce_scatter);
    // after AdamW on the shard, every bucket all-gathered (iall_gather, posted in turn, each
    // waited for before the next forward reads it: on one channel, all by the end).
    channel_sim sim;
    for (const cost& u : c.fwd)
        sim.compute(u);
    double bucket = 0;
    std::vector<double> buckets;
    cost last;
    for (int u = unit_count(t) - 1; u >= 0; --u) {
        sim.compute(c.bwd[static_cast<std::size_t>(u)]);
        bucket += unit_params(t, u);
        if (bucket * 4 >= t.bucket_bytes || u == 0) {
            const double bytes = padded(bucket, w.world) * 4;
            last = f.gpu ? placed_coll_cost(coll::reduce_scatter, bytes, w.world, w.ranks_per_node,
                                            f, mpi_call::nonblocking)
                         : placed_coll_cost(coll::sendrecv, bytes / w.world, w.world,
                                            w.ranks_per_node, f) *
                               (w.world - 1.0);
            sim.post(last);
            buckets.push_back(bytes);
            bucket = 0;
        }
    }
    sim.wait(sim.comm_free, last);
    sim.compute(c.adamw);
    for (const double bytes : buckets) {
        last = placed_coll_cost(coll::allgather, bytes, w.world, w.ranks_per_node, f,
                                mpi_call::nonblocking);
        sim.post(last);
    }
    sim.wait(sim.comm_free, last);
    return sim.path;
}

cost fsdp_step(const train_problem& t, const unit_costs& c, const placement& w, const figures& f) {
    const int n = unit_count(t), p = w.world;
    auto gather = [&](int u, mpi_call call) { // jobs/schemes/fsdp.cpp: prefetched ones nonblocking
        return placed_coll_cost(coll::allgather, padded(unit_params(t, u), p) * 4, p,
                                w.ranks_per_node, f, call);
    };
    channel_sim sim;
    int pending = -1; // the unit whose gather was prefetched
    double pending_done = 0;
    auto params = [&](int u, int next, bool more) {
        if (pending == u)
            sim.wait(pending_done, gather(u, mpi_call::nonblocking));
        else
            sim.blocking(gather(u, mpi_call::blocking));
        pending = -1;
        if (t.prefetch && more) {
            pending = next;
            pending_done = sim.post(gather(next, mpi_call::nonblocking));
        }
    };
    for (int u = 0; u < n; ++u) {
        params(u, u + 1, u + 1 < n);
        sim.compute(c.fwd[static_cast<std::size_t>(u)]);
    }
    double rs_done[2] = {0, 0};
    cost rs_cost[2];
    int k = 0;
    for (int u = n - 1; u >= 0; --u) {
        if (u >= 1)
            params(u, u - 1, u - 1 >= 1);
        sim.wait(rs_done[k], rs_cost[k]); // the scratch buffer's previous reduce-scatter
        sim.compute(c.bwd[static_cast<std::size_t>(u)]);
        rs_cost[k] = placed_coll_cost(coll::reduce_scatter, padded(unit_params(t, u), p) * 4, p,
                                      w.ranks_per_node, f, mpi_call::nonblocking);
        rs_done[k] = sim.post(rs_cost[k]);
        k = 1 - k;
    }
    sim.wait(sim.comm_free, rs_cost[1 - k]);
    sim.compute(c.adamw);
    return sim.path;
}

} // namespace

block_widths widths(const train_problem& t) {
    const double h = t.hidden;
    const double kv = (t.kv_heads > 0 ? t.kv_heads : t.heads) * (h / t.heads);
    const double f = t.ffn > 0 ? t.ffn : 4 * h;
    return {kv, h + 2 * kv, f, t.swiglu ? 2 * f : f};
}

double block_gemm_flops(const train_problem& t, double tokens) {
    const block_widths w = widths(t);
    const double h = t.hidden;
    return 2 * tokens * (h * (w.qkv + h + w.up) + w.ffn * h);
}

double unit_params(const train_problem& t, int u) {
    const double h = t.hidden, v = t.vocab;
    if (u == 0)
        return v * h;
    if (u <= t.layers) { // norm1, wqkv, wo, bo, norm2, w1, b1, w2, b2
        const block_widths w = widths(t);
        return h * (w.qkv + h + w.up + w.ffn) + 4 * h + w.up;
    }
    return h + v * h + v;
}

double total_params(const train_problem& t) {
    double s = 0;
    for (int u = 0; u < unit_count(t); ++u)
        s += unit_params(t, u);
    return s;
}

std::string train_refusal(const train_problem& t) {
    try { // the launch's own rules and words (src/base/shape_rules.hpp)
        auto whole = [](double v, const char* what) {
            return whole_in_range(v, 0, std::int64_t{1} << 50, what);
        };
        rules::check_model(whole(t.layers, "layers"), whole(t.hidden, "hidden"),
                           whole(t.heads, "heads"), whole(t.vocab, "vocab"));
        rules::check_batch(whole(t.tokens, "tokens"), whole(t.seq_len, "train_seq_len"), t.dp);
        rules::check_cp(t.cp, t.cp_variant, whole(t.heads, "heads"),
                        whole(t.seq_len, "train_seq_len"));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

step_prediction predict_train(const train_problem& t, const placement& where, const figures& f,
                              double width) {
    step_prediction out;
    out.label = t.dp_variant + (t.cp > 1 ? "/cp-" + t.cp_variant : "");
    out.memory_kind = f.gpu ? "device" : "host";
    out.refusal = train_refusal(t);
    if (!out.ok())
        return out;
    try {
        rules::resolve_dp(t.dp, t.cp, where.world);
    } catch (const config_error& e) {
        out.refusal = e.what();
        return out;
    }
    const unit_costs c = price_units(t, where, f, width);
    if (t.dp_variant == "zero1")
        out.time = zero1_step(t, c, where, f);
    else if (t.dp_variant == "fsdp")
        out.time = fsdp_step(t, c, where, f);
    else
        out.time = ddp_step(t, c, where, f);
    for (std::size_t u = 0; u < c.fwd.size(); ++u)
        out.ideal_s += c.fwd[u].compute() + c.bwd[u].compute();
    const double adam_full = t.dp_variant == "ddp" ? 1.0 : where.world;
    out.ideal_s += c.adamw.compute() * (adam_full / where.world);
    out.memory_bytes = train_memory(t, f.gpu);
    return out;
}

double train_memory(const train_problem& t, bool gpu) {
    const int p = t.dp * t.cp;
    const double total = total_params(t), h = t.hidden, fl = 4;
    double state = 5 * total; // ddp: params, grads, m, v, reduce target
    if (t.dp_variant == "zero1") {
        // params, grads, grad shard, m, v; on the CPU past 2 ranks the ring's two pieces
        const double n = padded(total, p);
        state = 2 * n + (p > 2 && !gpu ? 5 : 3) * n / p;
    } else if (t.dp_variant == "fsdp") {
        double shards = 0, biggest = 0;
        for (int u = 0; u < unit_count(t); ++u) {
            shards += padded(unit_params(t, u), p) / p;
            biggest = std::max(biggest, padded(unit_params(t, u), p));
        }
        state = 4 * shards + 4 * biggest;
    }
    const double tl = local_tokens(t);
    const block_widths w = widths(t); // as transformer::activation_floats
    const double act = t.layers * tl * (7 * h + 2 * w.kv + w.up + w.ffn + 2 + t.heads) +
                       tl * (2 * h + 1 + t.vocab) +
                       tl * (6 * h + 4 * w.kv + w.up + (t.swiglu ? w.ffn : 0));
    if (gpu)
        return fl * (state + act + tl * (t.heads + 1) + 2 * tl + padded(total, p)) + 8 * tl * h +
               64.0 * (1 << 20);
    double core = tl; // jobs/train_cp.cpp cp_core_floats
    if (t.cp > 1)
        core = t.cp_variant == "ring"      ? 8 * tl * h + tl
               : t.cp_variant == "ulysses" ? 17 * tl * h
                                           : 4.0 * t.cp * tl * h + tl;
    return fl * (state + act + core + total + 2 * tl);
}

} // namespace ringscale::analysis::predict
