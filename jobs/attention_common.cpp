#include "jobs/attention_common.hpp"

#include "jobs/attention_accuracy.hpp"
#include "kernels/attention_path.hpp"

#include "kernels/mask_count.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/shape_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace ringscale::jobs {

namespace {
// The declared ranges: lengths up to 2^30 tokens, batch and heads up to 2^16; the memory
// preflight refuses what does not fit.
constexpr double k_max_seq_len = rules::max_seq_len;
constexpr double k_max_heads = rules::max_heads;
} // namespace

kernels::attention_shape attention_problem::local_shape(int ranks) const {
    kernels::attention_shape s;
    s.batch = batch;
    s.heads = heads;
    s.kv_heads = kv_heads;
    s.head_dim = head_dim;
    s.causal = causal;
    s.q_len = s.k_len = seq_len / ranks;
    s.mask = mask_view();
    if (type == kernels::elem::e4m3) {
        s.descale_q = 1 / fp8_scale[0];
        s.descale_k = 1 / fp8_scale[1];
        s.descale_v = 1 / fp8_scale[2];
        s.descale_do = 1 / fp8_scale_do;
    }
    return s;
}

kernels::mask_view attention_problem::mask_view() const {
    return mask ? mask->view() : kernels::mask_view{};
}

double attention_problem::dense_flops() const {
    const double s = static_cast<double>(seq_len);
    double fwd = 4.0 * batch * s * s * heads * head_dim;
    if (causal)
        fwd *= 0.5;
    return backward ? fwd * 3.5 : fwd;
}

double attention_problem::flops() const {
    if (!mask)
        return dense_flops();
    const double fwd = 4.0 * batch * heads * head_dim * static_cast<double>(mask_pairs);
    return backward ? fwd * 3.5 : fwd;
}

std::vector<option_decl> attention_options() {
    std::vector<std::string> presets;
    for (const auto& [name, lengths] : seq_presets())
        presets.push_back(name);
    std::vector<option_decl> opts = {
        option_decl::size("seq-len", "4K", 1, k_max_seq_len)
            .sweeps()
            .help("global sequence length S in tokens (K = 1024)"),
        option_decl::size("seq-len-per-rank", "", 1, k_max_seq_len)
            .sweeps()
            .help("weak scaling: tokens per rank N instead of --seq-len; S follows --seq-rule; "
                  "recorded as scaling=weak"),
        option_decl::choice("seq-rule", "memory", {"memory", "work"})
            .sweeps()
            .help("with --seq-len-per-rank: memory (S = P*N, memory per rank constant) | work "
                  "(S = N*sqrt(P) rounded to the nearest multiple of the layout's chunks, P or "
                  "zigzag 2P; attention work per rank constant)"),
        option_decl::choice("seq-preset", "", presets)
            .sweeps()
            .names_lists_of("seq-len", seq_presets())
            .help("named list of S (replaces --seq-len; cases that cannot fit or divide are "
                  "skipped)"),
        option_decl::size("batch", "1", 1, k_max_heads).sweeps().help("sequences per step B"),
        option_decl::size("heads", "8", 1, k_max_heads).sweeps().help("query heads H"),
        option_decl::size("kv-heads", "0", 0, k_max_heads)
            .sweeps()
            .help("key/value heads (grouped-query attention; divides --heads; 0 = H)"),
        option_decl::size("head-dim", "64", 1, 1024).sweeps().help("head dimension D: 64 or 128"),
        option_decl::flag("causal", "1").sweeps().help("causal mask"),
        option_decl::choice("pass", "fwd", {"fwd", "fwd+bwd"}).sweeps().help("what runs"),
        option_decl::choice("layout", "zigzag", {"contiguous", "zigzag", "striped", "balanced"})
            .sweeps()
            .help("sequence sharding; zigzag with --docs cuts each document into 2P chunks; "
                  "balanced deals units (the sparse block, else S/(4P)) by their visible work"),
        option_decl::choice("dtype", "auto",
                            {"auto", "fp32", "bf16", "fp16", "fp8", "float32", "bfloat16",
                             "float16", "fp8_e4m3", "float8_e4m3"})
            .sweeps()
            .help("Q/K/V element type: fp32 (cpu) | bf16 | fp16 (cuda; fp32 accumulation; on cpu "
                  "emulated: rounded where the CUDA kernels round) | fp8 (E4M3, cuDNN's fp8 "
                  "attention forward: --device cuda, --attn-kernel cudnn, compute capability "
                  "9.0+; current per-tensor scaling); auto = fp32 on cpu, bf16 on cuda"),
        option_decl::choice("merge", "fp32", {"fp32", "dtype"})
            .sweeps()
            .help("the running O between blocks: fp32 (the kernels' merge) | dtype (rounded to "
                  "--dtype after each block's merge, as implementations that keep the partial "
                  "output in bf16 do)"),
        option_decl::choice("inputs", "uniform", {"uniform", "outliers"})
            .sweeps()
            .help("seeded inputs: uniform | outliers (massive channels in Q, K, V and an "
                  "attention sink on the first token)")};

    const auto masks = mask_options();
    opts.insert(opts.end(), masks.begin(), masks.end());
    return opts;
}

std::vector<std::string> attention_case_options() {
    return {"seq-len", "batch", "heads",  "kv-heads", "head-dim", "causal",   "pass",    "layout",
            "dtype",   "merge", "inputs", "window",   "docs",     "sparsity", "dilation"};
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
    pr.seq_len = static_cast<std::int64_t>(p.size("seq-len"));
    pr.batch = static_cast<std::int64_t>(p.size("batch"));
    pr.heads = static_cast<std::int64_t>(p.size("heads"));
    pr.kv_heads = static_cast<std::int64_t>(p.size("kv-heads"));
    if (pr.kv_heads == 0)
        pr.kv_heads = pr.heads;
    pr.head_dim = static_cast<std::int64_t>(p.size("head-dim"));
    pr.causal = p.flag("causal");
    pr.backward = p.text("pass") == "fwd+bwd";
    pr.layout = kernels::parse_layout(p.text("layout"));
    if (p.has("dtype") && p.text("dtype") != "auto")
        pr.type = kernels::parse_elem(p.text("dtype"));
    if (p.has("inputs"))
        pr.inputs = kernels::parse_input_kind(p.text("inputs"));
    pr.merge_in_dtype = p.has("merge") && p.text("merge") == "dtype";
    // The rules predict shares (src/base/shape_rules.hpp).
    rules::check_attention_shape(pr.seq_len, pr.batch, pr.heads, pr.kv_heads, pr.head_dim);
    const kernels::mask_spec spec = read_mask_spec(p);
    if (spec.any()) {
        pr.mask = std::make_shared<const kernels::attention_mask>(spec, pr.seq_len, pr.causal);
        const std::vector<std::int64_t> all = kernels::all_positions(pr.seq_len);
        pr.mask_pairs = kernels::count_visible(pr.mask_view(), pr.causal, all, all);
    }
    return pr;
}

attr_map attention_attrs(const attention_problem& pr) {
    namespace attr = schema::attr;
    attr_map a = {{attr::seq_len, pr.seq_len},
                  {attr::kv_heads, pr.kv_heads},
                  {attr::dtype, std::string(kernels::elem_name(pr.type))},
                  {attr::mfu_dtype,
                   std::string(pr.type == kernels::elem::e4m3 ? "fp8" // the peak's name for E4M3
                                                              : kernels::elem_short_name(pr.type))},
                  {attr::flops_per_iter, pr.flops()},
                  {attr::tokens_per_iter, static_cast<double>(pr.batch * pr.seq_len)},
                  {attr::flop_convention, std::string("fwd 4*B*S^2*H*D (causal /2), bwd 2.5*fwd")}};
    if (pr.mask) {
        a[attr::flop_convention] = std::string("fwd 4*B*H*D per visible (query, key) pair of the "
                                               "mask (visible_pairs, counted exactly), bwd "
                                               "2.5*fwd; dense_flops_per_iter without the mask");
        a[attr::visible_pairs] = pr.mask_pairs;
        a[attr::dense_flops_per_iter] = pr.dense_flops();
        a[attr::compute_reduction] = pr.flops() > 0 ? pr.dense_flops() / pr.flops()
                                                    : std::numeric_limits<double>::infinity();
    }
    return a;
}

void add_masked_attn_kernel(attr_map& a, bool masked, device_kind device) {
    // cuDNN takes the masks that reach a case (the launcher refused the others).
    if (!masked || device != device_kind::cuda ||
        kernels::attention_path() == kernels::attn_path::cudnn)
        return;
    a[schema::attr::attn_kernel] = std::string("sm80");
    a[schema::attr::attn_kernel_note] =
        std::string("a mask beyond causal runs the sm80 kernels (the sm90 kernels take none)");
}

std::int64_t weak_seq_len(std::int64_t per_rank, const std::string& rule, kernels::layout layout,
                          int ranks) {
    if (rule == "memory")
        return per_rank * ranks;
    const double unit = layout == kernels::layout::zigzag ? 2.0 * ranks : ranks;
    const double s = static_cast<double>(per_rank) * std::sqrt(static_cast<double>(ranks));
    return static_cast<std::int64_t>(std::max(1.0, std::round(s / unit)) * unit);
}

namespace {

/// One case of resolved parameters `p`: a rule `check` refuses is an error, or a skipped
/// case when the length came from a preset.
case_plan plan_one(
    const std::string& job, const params& p, const launch_info& launch, bool from_preset,
    const std::function<void(const params&, const attention_problem&, int)>& check,
    const std::function<std::uint64_t(const params&, const attention_problem&, int, bool)>& bytes) {
    case_plan c;
    c.job = job;
    // The mask is made while planning: one too large for a rank's memory is refused before it
    // is (its document count first), not after minutes and gigabytes.
    if (const kernels::mask_spec spec = read_mask_spec(p); spec.any()) {
        const std::uint64_t need =
            kernels::mask_plan_bytes(spec, static_cast<std::int64_t>(p.size("seq-len")));
        if (need > launch.host_bytes_per_rank)
            throw config_error(fmt::format("the mask {} on {} tokens needs {} of memory per rank "
                                           "to plan, {} available: choose a shorter sequence",
                                           spec.label(), p.text("seq-len"), format_bytes(need),
                                           format_bytes(launch.host_bytes_per_rank)));
    }
    const attention_problem pr = read_attention_problem(p);
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
    // --accuracy auto: where the measurement's time is at most 5% of the case's iterations; on
    // the CPU only (beside a GPU's kernels the fp64 loops on the host are never that cheap).
    c.show_accuracy = launch.accuracy == accuracy_mode::on;
    c.measure_accuracy =
        c.show_accuracy ||
        (launch.accuracy == accuracy_mode::automatic && launch.device == device_kind::cpu &&
         accuracy_cost_fraction(pr, launch.accuracy_sample, launch.world_size) <=
             0.05 * launch.iterations);
    // On a GPU validation works in host memory: the device estimate leaves it out.
    if (c.skip_reason.empty())
        c.bytes_per_rank = bytes(p, pr, launch.world_size,
                                 c.validate_by_default && launch.device != device_kind::cuda) +
                           (launch.device == device_kind::cuda ? mask_device_bytes(pr) : 0) +
                           (c.measure_accuracy ? accuracy_bytes(pr, launch.accuracy_sample) : 0);
    return c;
}

/// With --seq-len-per-rank in `p`: set "seq-len" to weak_seq_len(...) (what the case runs) and
/// "scaling" to "weak".
void set_weak_seq_len(params& p, int ranks) {
    const auto n = static_cast<std::int64_t>(p.size("seq-len-per-rank"));
    const auto layout = kernels::parse_layout(p.text("layout"));
    p.set("seq-len", size_value(static_cast<std::uint64_t>(
                         weak_seq_len(n, p.text("seq-rule"), layout, ranks))));
    p.set(schema::attr::scaling, text_value("weak"));
}

} // namespace

std::vector<case_plan> plan_attention_cases(
    const std::string& job, const std::vector<params>& sweep, const launch_info& launch,
    const std::vector<std::string>& extra_options,
    const std::function<void(const params&, const attention_problem&, int)>& check,
    const std::function<std::uint64_t(const params&, const attention_problem&, int, bool)>& bytes,
    const std::function<std::string(const params&)>& variant) {
    std::vector<case_plan> cases;
    std::set<std::string> seen;
    bool merge_dtype_asked = false, merge_dtype_kept = false;
    for (const params& point : sweep) {
        const bool weak = point.has("seq-len-per-rank");
        const bool from_preset = !point.get("seq-len").from_list.empty();
        if (weak && from_preset)
            throw config_error("--seq-preset and --seq-len-per-rank exclude each other: pick one");
        // The case's identity: the shape, the weak-scaling rule when weak, the job's own.
        auto names = attention_case_options();
        if (point.has("sparsity")) // the block pattern is part of the mask only with it
            names.insert(names.end(), {"sparse-pattern", "sparse-block"});
        if (weak)
            names.insert(names.begin() + 1, {"seq-len-per-rank", "seq-rule"});
        names.insert(names.end(), extra_options.begin(), extra_options.end());
        params p = point.only(names);
        if (weak)
            set_weak_seq_len(p, launch.world_size);
        // The resolved element type goes into the file, never "auto".
        const kernels::elem type = resolve_attention_dtype(p.text("dtype"), launch.device);
        if (type == kernels::elem::e4m3)
            check_fp8_case(p, launch);
        p.set("dtype", text_value(kernels::elem_short_name(type)));
        // fp32 merges in fp32 whatever --merge says: merge=dtype there is merge=fp32's case.
        if (p.has("merge") && p.text("merge") == "dtype") {
            merge_dtype_asked = true;
            if (type == kernels::elem::f32)
                p.set("merge", text_value("fp32"));
            else
                merge_dtype_kept = true;
        }
        // Options outside the identity (--seq-rule without --seq-len-per-rank) may repeat a case.
        std::string key;
        for (const auto& [name, value] : p.values())
            key += name + "=" + value.text + "|";
        if (!seen.insert(key).second)
            continue;
        cases.push_back(plan_one(job, p, launch, from_preset, check, bytes));
        cases.back().variant = variant(p);
    }
    if (merge_dtype_asked && !merge_dtype_kept)
        throw config_error("--merge dtype keeps the running O in --dtype between blocks: with "
                           "--dtype fp32 there is nothing to round (use --dtype bf16 or fp16)");
    return cases;
}

std::uint64_t mask_device_bytes(const attention_problem& pr) {
    if (!pr.mask)
        return 0;
    // dev_mask's copies: the document starts and the kept block pairs.
    return pr.mask->doc_starts().size() * sizeof(std::int64_t) + pr.mask->keep().size();
}

std::uint64_t attention_validation_bytes(const attention_problem& pr) {
    // Gathered global O (and dQ, dK, dV) plus the reference group's tensors.
    const double global = static_cast<double>(pr.batch) * pr.heads * pr.seq_len * pr.head_dim;
    return bytes_from_estimate((pr.backward ? 4.0 : 1.0) * global * 2 * sizeof(float));
}

void fill_head_rows(tensor_id id, std::uint64_t seed, const attention_problem& pr, std::int64_t b,
                    std::int64_t h, const std::vector<std::int64_t>& pos, float* out) {
    const bool is_kv = id == tensor_id::k || id == tensor_id::v;
    const kernels::attention_inputs in{pr.inputs, seed, pr.seq_len, pr.head_dim};
    const std::int64_t d = pr.head_dim;
    for (std::size_t i = 0; i < pos.size(); ++i) {
        float* row = out + static_cast<std::int64_t>(i) * d;
        kernels::attention_input_row(in, id, b, h, is_kv ? pr.kv_heads : pr.heads, pos[i], row);
        if (pr.type == kernels::elem::e4m3) {
            const float scale = id == tensor_id::d_out ? pr.fp8_scale_do
                                                       : pr.fp8_scale[static_cast<std::size_t>(id)];
            for (std::int64_t j = 0; j < d; ++j)
                row[j] = fp8_as_read(row[j], scale);
        } else if (pr.type != kernels::elem::f32)
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

} // namespace ringscale::jobs
