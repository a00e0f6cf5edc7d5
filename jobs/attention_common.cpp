#include "jobs/attention_common.hpp"

#include "kernels/random.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ringscale::jobs {

kernels::attention_shape attention_problem::local_shape(int ranks) const {
    kernels::attention_shape s;
    s.batch = batch;
    s.heads = heads;
    s.kv_heads = kv_heads;
    s.head_dim = head_dim;
    s.causal = causal;
    s.q_len = s.k_len = seq_len / ranks;
    return s;
}

double attention_problem::flops() const {
    const double s = static_cast<double>(seq_len);
    double fwd = 4.0 * batch * s * s * heads * head_dim;
    if (causal)
        fwd *= 0.5;
    return backward ? fwd * 3.5 : fwd;
}

std::vector<option_spec> attention_options() {
    return {{"seq-len", "4K", "global sequence length S in tokens (K = 1024; list ok)"},
            {"seq-len-per-rank", "",
             "weak scaling: tokens per rank N instead of --seq-len (list ok); S follows "
             "--seq-rule; recorded as scaling=weak"},
            {"seq-rule", "memory",
             "with --seq-len-per-rank: memory (S = P*N, memory per rank constant) | work (S = "
             "N*sqrt(P) rounded to the nearest multiple of the layout's chunks, P or zigzag 2P; "
             "attention work per rank constant)"},
            {"seq-preset", "",
             "named list of S: production, medium, long, document, context, book (replaces "
             "--seq-len; cases that cannot fit or divide are skipped)"},
            {"heads", "8", "query heads H"},
            {"kv-heads", "0", "key/value heads (grouped-query attention; divides --heads; 0 = H)"},
            {"head-dim", "64", "head dimension D: 64 or 128"},
            {"batch", "1", "sequences per step B"},
            {"causal", "1", "causal mask (0/1)", true},
            {"pass", "fwd", "fwd | fwd+bwd"},
            {"layout", "zigzag", "sequence sharding: contiguous | zigzag | striped"},
            {"dtype", "auto",
             "Q/K/V element type: fp32 (cpu) | bf16 | fp16 (cuda; fp32 accumulation); auto = "
             "fp32 on cpu, bf16 on cuda"}};
}

std::vector<std::string> attention_sweep_names() {
    return {"seq-len", "batch", "heads",  "kv-heads", "head-dim",
            "causal",  "pass",  "layout", "dtype"};
}

const std::map<std::string, std::vector<std::string>>& seq_presets() {
    static const std::map<std::string, std::vector<std::string>> presets = {
        {"production", {"1K", "2K", "4K", "8K", "12K", "16K"}},
        {"medium", {"32K", "49K", "64K", "98K", "128K"}},
        {"long", {"256K", "384K", "512K", "768K", "1M"}},
        {"document", {"512", "1K", "2K", "4K"}},
        {"context", {"4K", "8K", "16K", "32K"}},
        {"book", {"50K", "100K", "200K"}}};
    return presets;
}

attention_problem read_attention_problem(const params& p) {
    attention_problem pr;
    pr.seq_len = static_cast<std::int64_t>(p.positive_size("seq-len"));
    pr.batch = static_cast<std::int64_t>(p.positive_size("batch"));
    pr.heads = static_cast<std::int64_t>(p.positive_size("heads"));
    pr.kv_heads = static_cast<std::int64_t>(p.size("kv-heads"));
    if (pr.kv_heads == 0)
        pr.kv_heads = pr.heads;
    pr.head_dim = static_cast<std::int64_t>(p.positive_size("head-dim"));
    pr.causal = p.flag("causal");
    pr.backward = p.choice("pass", {"fwd", "fwd+bwd"}) == "fwd+bwd";
    pr.layout = kernels::parse_layout(p.text("layout"));
    if (p.has("dtype") && p.text("dtype") != "auto")
        pr.type = kernels::parse_elem(p.text("dtype"));
    if (pr.heads % pr.kv_heads != 0)
        throw config_error(
            fmt::format("--heads {} is not divisible by --kv-heads {}", pr.heads, pr.kv_heads));
    if (pr.head_dim != 64 && pr.head_dim != 128)
        throw config_error(
            fmt::format("--head-dim: {} is not supported (use 64 or 128)", pr.head_dim));
    return pr;
}

kernels::elem resolve_attention_dtype(const std::string& text, const std::string& device) {
    const bool cuda = device == "cuda";
    if (text == "auto")
        return cuda ? kernels::elem::bf16 : kernels::elem::f32;
    const kernels::elem e = kernels::parse_elem(text);
    if (!cuda && e != kernels::elem::f32)
        throw config_error(fmt::format("--dtype {}: the CPU attention kernels compute in fp32; "
                                       "use --dtype fp32, or --device cuda for {}",
                                       text, text));
    if (cuda && e == kernels::elem::f32)
        throw config_error("--dtype fp32 with --device cuda: the CUDA attention kernels take bf16 "
                           "or fp16 inputs (fp32 accumulation); use --dtype bf16 or fp16");
    return e;
}

attr_map attention_attrs(const attention_problem& pr) {
    return {{"seq_len", pr.seq_len},
            {"kv_heads", pr.kv_heads},
            {"dtype", std::string(kernels::elem_name(pr.type))},
            {"mfu_dtype", std::string(kernels::elem_short_name(pr.type))},
            {"flops_per_iter", pr.flops()},
            {"tokens_per_iter", static_cast<double>(pr.batch * pr.seq_len)},
            {"flop_convention", std::string("fwd 4*B*S^2*H*D (causal /2), bwd 2.5*fwd")}};
}

kernels::dev_buffer<unsigned char> upload_as(kernels::device& dev, kernels::elem type,
                                             const std::vector<float>& values) {
    kernels::dev_buffer<unsigned char> out(dev, values.size() * kernels::elem_bytes(type));
    if (type == kernels::elem::f32) {
        out.upload(reinterpret_cast<const unsigned char*>(values.data()), out.size());
        return out;
    }
    const kernels::dev_buffer<float> staged(dev, values);
    dev.convert(type, values.size(), staged.data(), out.data());
    dev.synchronize();
    return out;
}

std::int64_t weak_seq_len(std::int64_t per_rank, const std::string& rule, kernels::layout layout,
                          int ranks) {
    if (rule == "memory")
        return per_rank * ranks;
    const double unit = layout == kernels::layout::zigzag ? 2.0 * ranks : ranks;
    const double s = static_cast<double>(per_rank) * std::sqrt(static_cast<double>(ranks));
    return static_cast<std::int64_t>(std::max(1.0, std::round(s / unit)) * unit);
}

void set_weak_seq_len(params& p, int ranks) {
    const auto n = static_cast<std::int64_t>(p.positive_size("seq-len-per-rank"));
    const std::string& rule = p.choice("seq-rule", {"memory", "work"});
    const auto layout = kernels::parse_layout(p.text("layout"));
    p.set("seq-len", std::to_string(weak_seq_len(n, rule, layout, ranks)));
    p.set("scaling", "weak");
}

std::vector<case_plan> plan_attention_cases(
    const std::string& job, const param_lists& lists, const launch_info& launch,
    const std::vector<std::string>& extra_sweeps,
    const std::function<void(const params&, const attention_problem&, int)>& check,
    const std::function<std::uint64_t(const params&, const attention_problem&, int, bool)>& bytes,
    const std::function<std::string(const params&)>& variant) {
    param_lists expanded = lists;
    bool from_preset = false;
    auto preset = lists.find("seq-preset");
    if (preset != lists.end() && !preset->second.empty() && !preset->second.front().empty()) {
        expanded["seq-len"].clear();
        for (const auto& name : preset->second) {
            auto it = seq_presets().find(name);
            if (it == seq_presets().end())
                throw config_error(fmt::format("--seq-preset: unknown preset '{}'", name));
            for (const auto& s : it->second)
                expanded["seq-len"].push_back(s);
        }
        from_preset = true;
    }
    expanded.erase("seq-preset");
    const bool weak = expanded.count("seq-len-per-rank") > 0;
    if (weak && from_preset)
        throw config_error("--seq-preset and --seq-len-per-rank exclude each other: pick one");
    auto names = attention_sweep_names();
    if (weak)
        names.insert(names.begin() + 1, {"seq-len-per-rank", "seq-rule"});
    names.insert(names.end(), extra_sweeps.begin(), extra_sweeps.end());
    std::vector<case_plan> cases;
    for (params& all : expand_product(expanded, names)) {
        // Keep only this job's parameters: a launch of several jobs shares one list of
        // options, and another job's (e.g. --variant) must not be recorded with this case.
        params p;
        for (const auto& name : names)
            if (all.has(name))
                p.set(name, all.text(name));
        if (weak)
            set_weak_seq_len(p, launch.world_size);
        // The resolved element type goes into the file, never "auto".
        p.set("dtype", kernels::elem_short_name(resolve_attention_dtype(
                           p.has("dtype") ? p.text("dtype") : "auto", launch.device)));
        case_plan c;
        c.job = job;
        const attention_problem pr = read_attention_problem(p);
        c.variant = variant(p);
        c.values = p;
        c.skippable = from_preset;
        c.validate_by_default = pr.seq_len <= 8192;
        try {
            check(p, pr, launch.world_size);
        } catch (const config_error& e) {
            if (!from_preset)
                throw;
            c.skip_reason = e.what();
        }
        // On a GPU validation works in host memory: the device estimate leaves it out.
        if (c.skip_reason.empty())
            c.bytes_per_rank =
                bytes(p, pr, launch.world_size, c.validate_by_default && launch.device != "cuda");
        cases.push_back(std::move(c));
    }
    return cases;
}

std::vector<case_plan>
plan_attention(const std::string& job, const param_lists& lists, const launch_info& launch,
               const std::vector<std::string>& extra_sweeps,
               const std::function<void(const attention_problem&, int)>& check,
               const std::function<std::uint64_t(const attention_problem&, int, bool)>& bytes,
               const std::function<std::string(const params&)>& variant) {
    return plan_attention_cases(
        job, lists, launch, extra_sweeps,
        [&](const params&, const attention_problem& pr, int ranks) { check(pr, ranks); },
        [&](const params&, const attention_problem& pr, int ranks, bool validate) {
            return bytes(pr, ranks, validate);
        },
        variant);
}

std::uint64_t attention_validation_bytes(const attention_problem& pr) {
    // Gathered global O (and dQ, dK, dV) plus the reference group's tensors.
    const double global = static_cast<double>(pr.batch) * pr.heads * pr.seq_len * pr.head_dim;
    return static_cast<std::uint64_t>((pr.backward ? 4.0 : 1.0) * global * 2 * sizeof(float));
}

void fill_head_rows(tensor_id id, std::uint64_t seed, const attention_problem& pr, std::int64_t b,
                    std::int64_t h, const std::vector<std::int64_t>& pos, float* out) {
    const bool is_kv = id == tensor_id::k || id == tensor_id::v;
    const std::int64_t total_heads = is_kv ? pr.kv_heads : pr.heads;
    const std::uint64_t stream = kernels::mix64(seed * 8 + static_cast<std::uint64_t>(id));
    // Q and K scaled so scores span a few units: softmax neither flat nor one-hot.
    const float scale = (id == tensor_id::q || id == tensor_id::k) ? 2.0f : 1.0f;
    const std::int64_t d = pr.head_dim;
    for (std::size_t i = 0; i < pos.size(); ++i) {
        const std::int64_t global_row = (b * total_heads + h) * pr.seq_len + pos[i];
        float* row = out + static_cast<std::int64_t>(i) * d;
        kernels::fill_uniform(row, static_cast<std::size_t>(d), stream,
                              static_cast<std::uint64_t>(global_row * d), scale);
        if (pr.type != kernels::elem::f32)
            for (std::int64_t j = 0; j < d; ++j)
                row[j] = kernels::round_to(pr.type, row[j]);
    }
}

void fill_shard(tensor_id id, std::uint64_t seed, const attention_problem& pr,
                std::int64_t first_head, std::int64_t nheads, const std::vector<std::int64_t>& pos,
                float* out) {
    const auto rows = static_cast<std::int64_t>(pos.size());
    for (std::int64_t b = 0; b < pr.batch; ++b)
        for (std::int64_t h = 0; h < nheads; ++h)
            fill_head_rows(id, seed, pr, b, first_head + h, pos,
                           out + (b * nheads + h) * rows * pr.head_dim);
}

std::vector<float> gather_global(comm::communicator& c, const attention_problem& pr,
                                 std::int64_t nheads, const float* local,
                                 const std::vector<std::vector<std::int64_t>>& positions) {
    const std::int64_t rows = pr.seq_len / c.size();
    const std::int64_t outer = pr.batch * nheads;
    const std::size_t per_rank = static_cast<std::size_t>(outer * rows * pr.head_dim);
    std::vector<float> all(per_rank * static_cast<std::size_t>(c.size()));
    c.all_gather(local, all.data(), per_rank, comm::dtype::f32);
    std::vector<float> global(static_cast<std::size_t>(outer * pr.seq_len * pr.head_dim));
    for (int r = 0; r < c.size(); ++r)
        kernels::gather_rows(all.data() + per_rank * static_cast<std::size_t>(r), outer, pr.seq_len,
                             pr.head_dim, positions[static_cast<std::size_t>(r)], global.data());
    return global;
}

std::vector<table_column> attention_columns() {
    return {{"seq", 8},     {"H/Hkv", 6}, {"D", 4},          {"causal", 6}, {"pass", 7},
            {"layout", 10}, {"tok/s", 9}, {"TF/s/rank", 10}, {"max_err", 9}};
}

std::vector<std::string> attention_row(const case_summary& s) {
    const auto& v = s.plan->values;
    const double t = s.median_time_s;
    const double tf = t > 0 ? attr_number(s.attrs, "flops_per_iter") / t / s.world_size / 1e12 : 0;
    const double tokens = attr_number(s.attrs, "tokens_per_iter");
    return {format_size(v.size("seq-len")),
            fmt::format("{}/{}", v.text("heads"),
                        v.text("kv-heads") == "0" ? v.text("heads") : v.text("kv-heads")),
            v.text("head-dim"),
            v.flag("causal") ? "yes" : "no",
            v.text("pass"),
            v.text("layout"),
            t > 0 ? fmt::format("{:.0f}", tokens / t) : "-",
            t > 0 ? fmt::format("{:.3g}", tf) : "-",
            s.check.checked ? fmt::format("{:.1e}", s.check.max_abs_err) : "-"};
}

} // namespace ringscale::jobs
