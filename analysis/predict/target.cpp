#include "target.hpp"

#include "links.hpp"
#include "train.hpp"

#include "src/base/backend.hpp"
#include "src/base/checked_count.hpp"
#include "src/base/dtype_names.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/shape_rules.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace ringscale::analysis::predict {

namespace {

std::string field(const target& t, const std::string& name, const std::string& fallback = "") {
    const auto it = t.identity.find(name);
    return it == t.identity.end() ? fallback : it->second;
}

/// A number as the identity or --at wrote it ("4096", "4K", "0.5"); `fallback` when absent.
double number(const target& t, const std::string& name, double fallback) {
    const std::string v = field(t, name);
    if (v.empty())
        return fallback;
    try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used == v.size())
            return d;
    } catch (const std::exception&) {
    }
    return static_cast<double>(parse_size(v, name));
}

bool flag(const target& t, const std::string& name, bool fallback) {
    const std::string v = field(t, name);
    return v.empty() ? fallback : parse_bool(v, name);
}

double elem_bytes(const std::string& dtype) {
    const dtypes::dtype_info* d = dtypes::find(dtype); // src/base/dtype_names.hpp
    return d ? d->bytes : 4;
}

attention_problem attention_of(const target& t) {
    attention_problem a;
    const int p = t.where.world;
    a.layout = field(t, "layout", "contiguous");
    if (field(t, "scaling") == "weak" && !field(t, "seq_len_per_rank").empty()) {
        const double n = number(t, "seq_len_per_rank", 0);
        if (field(t, "seq_rule", "memory") == "memory") {
            a.seq_len = n * p;
        } else { // jobs/attention_common.cpp weak_seq_len
            const double unit = a.layout == "zigzag" ? 2.0 * p : p;
            a.seq_len = std::max(1.0, std::round(n * std::sqrt(p) / unit)) * unit;
        }
    } else {
        a.seq_len = number(t, "seq_len", 0);
    }
    a.batch = number(t, "batch", 1);
    a.heads = number(t, "heads", 8);
    a.kv_heads = number(t, "kv_heads", 0);
    if (a.kv_heads == 0)
        a.kv_heads = a.heads;
    a.head_dim = number(t, "head_dim", 64);
    a.causal = flag(t, "causal", false);
    a.backward = field(t, "pass", "fwd") == "fwd+bwd";
    a.elem_bytes = elem_bytes(field(t, "dtype", "float32"));
    a.overlap = flag(t, "overlap", true);
    // What the launch would refuse, in its words (src/base/shape_rules.hpp): config_error,
    // which predict_target turns into the row's refusal.
    auto whole = [](double v, const char* what) {
        return whole_in_range(v, 0, std::int64_t{1} << 50, what);
    };
    rules::check_attention_shape(whole(a.seq_len, "seq_len"), whole(a.batch, "batch"),
                                 whole(a.heads, "heads"), whole(a.kv_heads, "kv_heads"),
                                 whole(a.head_dim, "head_dim"));
    return a;
}

train_problem train_of(const target& t) {
    train_problem tp;
    const int p = t.where.world;
    tp.layers = number(t, "layers", 4);
    tp.hidden = number(t, "hidden", 512);
    tp.heads = number(t, "heads", 8);
    tp.vocab = number(t, "vocab", 1024);
    tp.kv_heads = number(t, "kv_heads", 0);
    tp.ffn = number(t, "ffn", 0);
    tp.swiglu = field(t, "mlp", "gelu") == "swiglu";
    tp.seq_len = number(t, "train_seq_len", 512);
    tp.tokens = number(t, "tokens", 4096) * (field(t, "scaling") == "weak" ? p : 1);
    // The launch's grid rule (dp x cp = P; dp 0 is P / cp), in its words.
    tp.cp = static_cast<int>(whole_in_range(number(t, "cp", 1), 1, max_ranks, "cp"));
    const std::int64_t dp = whole_in_range(number(t, "dp", 0), 0, max_ranks, "dp");
    tp.dp = static_cast<int>(rules::resolve_dp(dp, tp.cp, p));
    tp.dp_variant = field(t, "dp_variant", "ddp");
    tp.cp_variant = field(t, "cp_variant", "ring");
    tp.prefetch = flag(t, "prefetch", false);
    tp.bucket_bytes = number(t, "bucket_mb", 25) * (1 << 20);
    tp.attn_elem_bytes = find_device_kind(field(t, "device", "cpu")) == device_kind::cuda ? 2 : 4;
    return tp;
}

step_prediction predict_collective(const target& t, const figures& f) {
    step_prediction out;
    coll op;
    const std::string name = field(t, "op");
    out.label = name;
    mpi_call call = mpi_call::blocking;
    if (!parse_coll(name, op, &call)) {
        out.refusal = fmt::format("collective '{}' has no cost model", name.substr(0, 40));
        return out;
    }
    const std::string scope = field(t, "scope", "world");
    const int group = scope == "intra"   ? t.where.ranks_per_node
                      : scope == "inter" ? t.where.nodes
                                         : t.where.world;
    const double bytes = number(t, "requested_bytes", 0);
    out.time =
        scope == "world" && t.where.nodes > 1
            ? placed_coll_cost(op, bytes, group, t.where.ranks_per_node, f, call, sendrecv_shift(t))
            : coll_cost(op, bytes, group, case_level(t), f);
    return out;
}

/// The first figure a prediction needed that the calibration does not have.
std::string missing_figure(const cost& c) {
    const std::pair<const char*, double> parts[] = {
        {"the attention compute rate", c.attn}, {"the GEMM compute rate", c.gemm},
        {"the memory-bound rate", c.mem},       {"the per-call overhead", c.calls},
        {"alpha inside a node", c.alpha[0]},    {"beta inside a node", c.beta[0]},
        {"alpha between nodes", c.alpha[1]},    {"beta between nodes", c.beta[1]}};
    for (const auto& [name, v] : parts)
        if (std::isnan(v))
            return fmt::format("{} is not calibrated (no case in CALIB measures it; "
                               "--hardware states every figure)",
                               name);
    return "";
}

} // namespace

std::string device_key(const case_data& c) {
    const auto dev = c.identity.find("device");
    std::string key = dev == c.identity.end() ? "cpu" : dev->second.text;
    if (!c.file)
        return key;
    const auto name = c.file->meta.find("device_name");
    if (name != c.file->meta.end() && !name->second.text.empty())
        key += " (" + name->second.text.substr(0, 60) + ")";
    return key;
}

int sendrecv_shift(const target& t) {
    const double s = number(t, "shift", 1);
    return s >= 1 && s <= t.where.world ? static_cast<int>(s) : 1;
}

target target_of(const pooled_case& c) {
    target t;
    const case_data& d = c.launches.empty() ? *c.not_ok.front() : *c.launches.front();
    t.job = c.job;
    t.variant = c.variant;
    for (const auto& [k, v] : d.identity)
        if (k != "job" && k != "variant" && k != "world_size")
            t.identity[k] = v.text;
    t.where.world = c.world_size;
    const auto nodes = d.identity.find("nodes");
    const auto rpn = d.identity.find("ranks_per_node");
    t.topology_recorded = nodes != d.identity.end() || rpn != d.identity.end();
    const int node_count = nodes != d.identity.end() && nodes->second.number
                               ? std::max(1, static_cast<int>(*nodes->second.number))
                               : 1;
    t.where.ranks_per_node = rpn != d.identity.end() && rpn->second.number
                                 ? std::max(1, static_cast<int>(*rpn->second.number))
                                 : std::max(1, c.world_size / node_count);
    t.where.nodes = std::max(1, c.world_size / t.where.ranks_per_node);
    t.identity.erase("nodes");
    t.identity.erase("ranks_per_node");
    t.device_key = device_key(d);
    double threads = 0, cores = 0, n = 0;
    for (const case_data* l : c.launches)
        for (std::size_t r = 0; r < l->threads.size() && r < l->affinity_cores.size(); ++r) {
            threads += l->threads[r];
            cores += l->affinity_cores[r];
            ++n;
        }
    if (n > 0) {
        t.threads_used = threads / n;
        t.affinity_cores = cores / n;
    }
    double used = 0, m = 0;
    for (const case_data* l : c.launches)
        if (const auto it = l->machine.find(schema::machine_ds::load_cores); it != l->machine.end())
            for (double v : it->second)
                if (std::isfinite(v) && v >= 1) {
                    used += v;
                    ++m;
                }
    if (m > 0)
        t.node_cores_used = used / m;
    t.label = c.label();
    t.measured = &c;
    return t;
}

double rank_threads(const target& t, const figures& f) {
    const double node = std::max(f.node_cores, t.affinity_cores.value_or(0));
    double threads = t.threads_used.value_or(number(t, "threads", 0));
    if (threads <= 0)
        threads = std::max(1.0, std::floor(node / t.where.ranks_per_node));
    return threads;
}

double rank_share(const target& t, const figures& f) {
    const double node = std::max(f.node_cores, t.affinity_cores.value_or(0));
    double share = node / t.where.ranks_per_node;
    if (t.affinity_cores && *t.affinity_cores < node)
        share = *t.affinity_cores; // a bound rank owns its cores
    if (t.node_cores_used)         // unless the node's ranks were bound to the same ones
        share = std::min(share, *t.node_cores_used / t.where.ranks_per_node);
    return share;
}

double rank_width(const target& t, const figures& f) {
    if (f.fixed_width > 0)
        return f.fixed_width;
    if (f.gpu || find_device_kind(field(t, "device", "cpu")) != device_kind::cpu)
        return 1;
    const double threads = 1 + f.thread_efficiency * (rank_threads(t, f) - 1);
    return std::max(1e-3, std::min(threads, rank_share(t, f)));
}

link_level case_level(const target& t) {
    const std::string scope = field(t, "scope", "world");
    if (scope == "intra")
        return link_level::intra;
    if (scope == "inter")
        return link_level::inter;
    return t.where.nodes > 1 ? link_level::inter : link_level::intra;
}

/// The first identity value the job would refuse as a choice ("" when all are known).
std::string unknown_choice(const target& t) {
    const std::pair<const char*, std::set<std::string>> choices[] = {
        {"layout", {"contiguous", "zigzag", "striped"}},
        {"pass", {"fwd", "fwd+bwd"}},
        {"dp_variant", {"ddp", "zero1", "fsdp"}},
        {"cp_variant", {"ring", "allgather", "ulysses"}}};
    for (const auto& [name, allowed] : choices) {
        const std::string v = field(t, name);
        if (!v.empty() && !allowed.count(v))
            return fmt::format("{} '{}' is not one the job runs", name, v.substr(0, 40));
    }
    if (t.job == "context_parallel" && t.variant != "allgather" && t.variant != "ulysses" &&
        t.variant != "hybrid")
        return fmt::format("context_parallel variant '{}' is not allgather, ulysses or hybrid",
                           t.variant.substr(0, 40));
    return "";
}

/// Why the cost models cannot price `t` although its job runs it ("" when they can): attention
/// masks, whose per-rank work and skipped exchanges they do not know (they would price the dense
/// case), and train_step's cp groups placed across nodes (priced inside nodes).
std::string unmodelled(const target& t) {
    for (const char* mask : {"window", "docs", "sparsity", "dilation"})
        if (!field(t, mask).empty())
            return fmt::format("attention masks (--{}) have no cost model yet: it would price "
                               "the dense case",
                               mask);
    const std::string cp = field(t, schema::attr::cp_placement, "node");
    if (cp != "node")
        return fmt::format("cp_placement '{}' has no cost model yet: it places every cp group "
                           "inside nodes",
                           cp.substr(0, 40));
    return "";
}

step_prediction predict_target(const target& t, const figures& f, int only_rank) {
    step_prediction out;
    out.refusal = unknown_choice(t);
    if (out.ok())
        out.refusal = unmodelled(t);
    if (!out.ok())
        return out;
    try {
        if (t.job == "collectives") {
            out = predict_collective(t, f);
        } else if (t.job == "ring_attention" || t.job == "context_parallel") {
            const std::string scheme = t.job == "ring_attention" ? "ring" : t.variant;
            const int u = static_cast<int>(number(t, "ulysses_degree", 0));
            placement where = t.where;
            where.groups_across = field(t, schema::attr::ulysses_placement, "node") == "across";
            out = predict_attention(scheme, u, attention_of(t), where, f, rank_width(t, f),
                                    only_rank);
        } else if (t.job == "train_step") {
            out = predict_train(train_of(t), t.where, f, rank_width(t, f));
        } else {
            out.refusal = fmt::format("job '{}' has no cost model", t.job.substr(0, 40));
        }
    } catch (const config_error& e) { // an identity value the job itself would refuse
        out.refusal = e.what();
    }
    if (out.ok() && !std::isfinite(out.time.total()))
        out.refusal = missing_figure(out.time);
    if (out.ok())
        out.time = with_rank_jitter(out.time, f.rank_jitter, t.where.world);
    return out;
}

} // namespace ringscale::analysis::predict
