#include "jobs/train_problem.hpp"

#include "jobs/numerics_memory.hpp"
#include "jobs/train_attention.hpp"
#include "jobs/train_lowp.hpp"
#include "kernels/layout.hpp"
#include "kernels/mask_count.hpp"
#include "kernels/model/transformer.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/shape_rules.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace ringscale::jobs {

const char* flop_convention() {
    return "6 * (parameters except the embedding table) * global tokens + attention "
           "12 * layers * sequences * seq_len^2 * hidden / 2 (causal; with --docs "
           "12 * layers * sequences * hidden per visible (query, key) pair, counted exactly); "
           "fwd+bwd, per step";
}

double train_problem::flops_per_step() const {
    const kernels::model::param_layout layout(model);
    const double dense = static_cast<double>(layout.total() - layout.unit(0).size);
    const double s = static_cast<double>(seq_len);
    const double pairs = docs ? static_cast<double>(doc_pairs) : s * s / 2;
    const double attn = 12.0 * model.layers * sequences * pairs * model.hidden;
    return 6.0 * dense * global_tokens + attn;
}

double train_problem::dp_comm_bytes_per_step() const {
    const kernels::model::param_layout layout(model);
    const int p = dp * cp;
    if (p <= 1)
        return 0; // one rank sends nothing: its all-reduce or reduce-scatter is a no-op
    if (dp_set.variant == "ddp")
        return layout.total() * 4.0;
    if (dp_set.variant == "zero1")
        return 2.0 * schemes::padded(layout.total(), p) * 4.0;
    double bytes = 0;
    for (int u = 0; u < layout.units(); ++u)
        bytes += schemes::padded(layout.unit(u).size, p) * 4.0 * (u == 0 ? 2 : 3);
    return bytes;
}

namespace {

// Bytes one rank sends per layer in a Ulysses group of u ranks holding t tokens each (K/V
// heads divisible by u): Q, K, V, O forward; Q, K, V, dO in, dQ, dK, dV out backward (5 x t x
// hidden/u + 6 x t x kv_width/u floats); per-row LSE, LSE and delta (3 x t x heads/u);
// (u-1)/u of it leaves.
double ulysses_bytes(double t, const kernels::model::model_config& m, int u) {
    const double q = static_cast<double>(m.hidden) / u;
    const double kv = static_cast<double>(m.kv_width()) / u;
    return 4.0 * (u - 1) * (5.0 * t * q + 6.0 * t * kv + 3.0 * t * (m.heads / u));
}

// ... in a ring of n ranks whose K|V blocks hold `block` bytes: K/V n-1 hops forward and
// backward, dK/dV n hops home (none on one rank).
double ring_bytes(double block, int n) {
    return n > 1 ? (n - 1) * block * 2 + n * block : 0.0;
}

} // namespace

double train_problem::cp_comm_bytes_per_step() const {
    if (cp == 1)
        return 0;
    // t tokens per rank; one K/V block is 2 x t x kv_width floats (a hybrid group's block: u x t
    // rows of kv_width/u). A gather, reduce-scatter or all-to-all sends (cp-1)/cp of the group's
    // data from every rank.
    const double t = static_cast<double>(local_sequences() * local_rows());
    const double block = 2.0 * t * static_cast<double>(model.kv_width()) * 4.0;
    double per_layer = 0;
    if (cp_variant == "ring")
        per_layer = ring_bytes(block, cp);
    else if (cp_variant == "allgather") // K/V gathered twice, dK/dV reduce-scattered once
        per_layer = 3.0 * (cp - 1) * block;
    else // ulysses (u = cp) and hybrid
        per_layer =
            ulysses_bytes(t, model, cp_ulysses_degree) + ring_bytes(block, cp / cp_ulysses_degree);
    return per_layer * model.layers;
}

std::uint64_t train_problem::bytes_per_rank(bool validate) const {
    const kernels::model::param_layout layout(model);
    const double t = static_cast<double>(local_sequences() * local_rows());
    double bytes = schemes::dp_state_bytes(dp_set, dp * cp, layout);
    bytes += 4.0 * kernels::model::transformer::activation_floats(
                       model, {local_sequences(), local_rows()});
    bytes += 4.0 * train_cp_floats(cp_variant, cp, cp_ulysses_degree, t, model);
    bytes += 4.0 * layout.total(); // the initial parameters, kept for validation
    bytes += 4.0 * t * 2;          // token ids and targets
    bytes += numerics_bytes(*this);
    if (validate) // reference: params, grads, m, v, step-1 gradient; gathered params, grads
        bytes += 4.0 * (7.0 * layout.total() + kernels::model::transformer::activation_floats(
                                                   model, {reference_micro_batch(), seq_len}));
    return bytes_from_estimate(bytes + (16u << 20)); // attention workspace, slack
}

std::uint64_t train_problem::device_bytes_per_rank(bool validate) const {
    const kernels::model::param_layout layout(model);
    const double t = static_cast<double>(local_sequences() * local_rows());
    const double h = static_cast<double>(model.hidden);
    double bytes = schemes::dp_state_bytes(dp_set, dp * cp, layout);
    bytes += 4.0 * kernels::model::transformer::activation_floats(
                       model, {local_sequences(), local_rows()});
    bytes += 4.0 * t * (model.heads + 1); // attention delta, per-row losses
    const double qkv_do = h + static_cast<double>(model.qkv_width()); // Q, K|V, dO features
    bytes += 2.0 * qkv_do * t;                                        // bf16 Q, K|V, dO
    bytes += 4.0 * t * 2;                                             // token ids and targets
    bytes +=
        4.0 * schemes::padded(layout.total(), dp * cp); // gathered gradient (validation, ZeRO-1)
    if (docs) // the document starts on the device (dev_mask)
        bytes += 8.0 * static_cast<double>(docs->doc_starts().size());
    if (cp > 1) // the scheme's buffers (counted in fp32)
        bytes += 4.0 * train_cp_floats(cp_variant, cp, cp_ulysses_degree, t, model);
    if (validate && numerics_steps == 0) { // the reference: params, grads, m, v; its micro-batch
        const double s = static_cast<double>(seq_len * reference_micro_batch());
        bytes += 4.0 * (4.0 * layout.total() + kernels::model::transformer::activation_floats(
                                                   model, {reference_micro_batch(), seq_len}));
        bytes += 4.0 * s * (model.heads + 1) + 2.0 * qkv_do * s + 4.0 * s * 2;
    }
    bytes += numerics_device_bytes(*this); // --numerics: its reference and floor runs instead
    // --dtype's operand buffers, shared by the reference and the numerics' runs on the device.
    const double whole = numerics_steps > 0 ? static_cast<double>(sequences * seq_len) : 0.0;
    bytes +=
        lowp_scratch_bytes(model, precision.dtype,
                           std::max({t, validate ? static_cast<double>(seq_len) : 0.0, whole}));
    return bytes_from_estimate(bytes + (64u << 20)); // cuBLAS workspace, slack
}

void check_train_device(const train_problem& pr, device_kind device, int cc_major, int cc_minor) {
    if (device == device_kind::cpu && pr.tf32)
        throw config_error("--tf32 on needs --device cuda (TF32 is a GPU tensor-core mode; the "
                           "CPU kernels compute in fp32)");
    if (device != device_kind::cpu)
        if (const std::string why = lowp_gpu_refusal(pr, cc_major, cc_minor); !why.empty())
            throw config_error(why);
}

std::vector<option_decl> train_options() {
    using d = option_decl;
    return {
        d::size("layers", "4", 1, 1024).sweeps().help("transformer blocks L"),
        d::size("hidden", "512", 1, 1 << 16)
            .sweeps()
            .help("model width in features (hidden / heads must be 64 or 128)"),
        d::size("heads", "8", 1, 1 << 16).sweeps().help("query heads H"),
        d::size("kv-heads", "0", 0, 1 << 16)
            .sweeps()
            .help("key/value heads (grouped-query attention; divides --heads; 0 = H)"),
        d::size("ffn", "0", 0, 1 << 20)
            .sweeps()
            .help("train_step: MLP width in features (0 = 4 x hidden; SwiGLU's gate and up "
                  "projections are each this wide)"),
        d::choice("mlp", "gelu", {"gelu", "swiglu"})
            .sweeps()
            .help("train_step: the MLP, gelu (tanh form) | swiglu (silu(gate) x up, as Llama)"),
        d::size("vocab", "1024", 1, 1 << 24).sweeps().help("vocabulary size in tokens"),
        d::size("train-seq-len", "512", 1, 1 << 24)
            .sweeps()
            .help("train_step: sequence length in tokens (the attention jobs' --seq-len is "
                  "separate)"),
        d::text("docs", "")
            .sweeps()
            .help("documents packed into each sequence, attention only within one: fixed:L | "
                  "uniform:LO-HI (seeded lengths) | L1+L2+... (summing to the sequence)"),
        d::size("tokens", "4096", 1, 1ull << 40)
            .sweeps()
            .help("train_step: global batch in tokens per step (weak scaling: per rank)"),
        d::choice("scaling", "strong", {"strong", "weak"})
            .help("strong (global batch fixed) | weak (per-rank batch fixed)"),
        d::size("dp", "0", 0, 1 << 20).sweeps().help("data-parallel ranks (0 = ranks / cp)"),
        d::size("cp", "1", 1, 1 << 20)
            .sweeps()
            .help("context-parallel ranks per replica (dp x cp = ranks)"),
        d::choice("dp-variant", "ddp", {"ddp", "zero1", "fsdp"}).sweeps().help("data parallelism"),
        d::choice("cp-variant", "ring", {"ring", "allgather", "ulysses", "hybrid"})
            .sweeps()
            .help("attention across cp ranks: ring | allgather | ulysses (heads divisible by "
                  "cp) | hybrid (Ulysses in groups of --cp-ulysses-degree, ring across them)"),
        d::size("cp-ulysses-degree", "0", 0, 1 << 20)
            .sweeps()
            .help("--cp-variant hybrid: cp ranks per Ulysses group u, dividing cp and the heads; "
                  "0 = the largest such u with u*u <= cp"),
        d::choice("cp-placement", "node", {"node", "across"})
            .sweeps()
            .help("each replica's cp ranks inside one node (node) or on different nodes "
                  "(across; to measure the cost)"),
        d::flag("prefetch", "off").sweeps().help("FSDP: gather the next layer's parameters early"),
        d::number("bucket-mb", "25", 0.001, 1e6).sweeps().help("DDP gradient bucket size in MiB"),
        d::number("lr", "0.001", 0, 1).help("AdamW learning rate, above 0 and below 1"),
        d::integer("steps-validate", "3", 1, 1000)
            .help("training steps compared with the single-rank run"),
        d::flag("tf32", "off")
            .help("train_step on cuda: let fp32 GEMMs use TF32 tensor cores (recorded with the "
                  "case)"),
        d::flag("profile", "off")
            .help("train_step: time every operation of the step on rank 0 (host clock on the "
                  "CPU, CUDA events on a GPU; recorded as profile_* attributes, shown by "
                  "ringscale-stats profile)"),
        d::choice("dtype", "auto",
                  {"auto", "fp32", "bf16", "fp16", "fp8", "float32", "bfloat16", "float16"})
            .sweeps()
            .help("train_step: mixed precision, emulated on the CPU: bf16 | fp16 (GEMM and "
                  "attention inputs rounded, fp32 accumulation and master weights; fp16 with "
                  "--loss-scale) | fp8 (E4M3 activations and weights, E5M2 gradients, per-tensor "
                  "scaling, --fp8-recipe) | fp32 (auto)"),
        d::choice("fp8-recipe", "delayed", {"delayed", "current"})
            .sweeps()
            .help("train_step --dtype fp8: per-tensor scale from the amax history (delayed, amax "
                  "reduced over the ranks each step) or from the tensor itself (current)"),
        d::number("loss-scale", "1024", 1, 16777216)
            .help("train_step --dtype fp16: the static loss scale (1 to 2^24)"),
        d::integer("numerics", "0", 0, 100000)
            .implicit("200")
            .help("train_step: follow this many steps against the single-rank run and the "
                  "reduction-order floor, per step (0 = off; given alone: 200, the study's "
                  "length)"),
        d::integer("numerics-floor-runs", "32", 8, 1000)
            .help("train_step --numerics: reordered single-rank runs making the floor (at "
                  "least 8; 32 by default: the floor is their worst, and the first steps' "
                  "parameter divergence is heavy-tailed)"),
        d::size("data-seed", "0", 0, 1ull << 40)
            .sweeps()
            .help("train_step: added to --seed for the model and data (part of the case)"),
        d::integer("seeds", "1", 1, 1000)
            .help("train_step: cases per configuration, --data-seed, +1, ..., +seeds-1")};
}

std::vector<std::string> train_case_options(const train_problem& pr) {
    using kernels::model::train_dtype;
    const bool numerics = pr.numerics_steps > 0;
    // Options added later join the identity only where they shape the case, so cases of older
    // files keep theirs (dtype fp32 is identity_defaults' value for them).
    const std::map<std::string, bool> only_if = {
        {"cp-ulysses-degree", pr.cp > 1 && pr.cp_variant == "hybrid"},
        {"kv-heads", pr.model.kv_heads != 0},
        {"ffn", pr.model.ffn != 0},
        {"mlp", pr.model.mlp != kernels::model::mlp_kind::gelu},
        {"fp8-recipe", pr.precision.dtype == train_dtype::fp8},
        {"loss-scale", pr.precision.dtype == train_dtype::fp16},
        {"numerics", numerics},
        {"numerics-floor-runs", numerics},
        {"data-seed", numerics || pr.data_seed != 0},
        {"seeds", false}}; // expanded into data-seed
    std::vector<std::string> names;
    for (const option_decl& o : train_options()) {
        const auto it = only_if.find(o.name);
        if (it == only_if.end() || it->second)
            names.push_back(o.name);
    }
    return names;
}

namespace {
void read_grid(const params& p, int world, train_problem& pr) {
    pr.cp = static_cast<int>(p.size("cp")); // at most 2^20, its declared range
    // dp at most 2^20 too; the grid rule predict shares (src/base/shape_rules.hpp)
    pr.dp =
        static_cast<int>(rules::resolve_dp(static_cast<std::int64_t>(p.size("dp")), pr.cp, world));
}

// The Ulysses degree of --cp-variant ulysses (cp) or hybrid (--cp-ulysses-degree; 0: the
// largest divisor u of cp and the heads with u*u <= cp), checked.
void read_cp_degree(const params& p, train_problem& pr) {
    // A Ulysses group shares out the query heads and the K/V heads alike: every K/V head count
    // divides the query heads, so dividing the K/V heads is the rule.
    const std::int64_t heads = pr.model.kv_count();
    if (pr.cp_variant == "ulysses" && heads % pr.cp != 0)
        throw config_error(fmt::format("--cp-variant ulysses: the K/V heads ({}) must be "
                                       "divisible by cp ({}): each rank attends with whole heads",
                                       heads, pr.cp));
    if (pr.cp_variant == "ulysses")
        pr.cp_ulysses_degree = pr.cp;
    if (pr.cp_variant != "hybrid")
        return;
    const std::uint64_t u = p.has("cp-ulysses-degree") ? p.size("cp-ulysses-degree") : 0;
    if (u == 0) {
        for (int d = 1; d * d <= pr.cp; ++d)
            if (pr.cp % d == 0 && heads % d == 0)
                pr.cp_ulysses_degree = d;
        return;
    }
    if (u > static_cast<std::uint64_t>(pr.cp) || pr.cp % static_cast<int>(u) != 0 ||
        heads % static_cast<std::int64_t>(u) != 0)
        throw config_error(
            fmt::format("--cp-ulysses-degree {} must divide cp ({}) and the "
                        "K/V heads ({}): the hybrid runs a ring of cp/u Ulysses groups",
                        u, pr.cp, heads));
    pr.cp_ulysses_degree = static_cast<int>(u);
}

// --dtype and its recipe, --numerics and the seeds (each absent in older plans: defaults).
void read_numerics(const params& p, train_problem& pr) {
    namespace m = kernels::model;
    if (p.has("dtype"))
        pr.precision.dtype = m::parse_train_dtype(p.text("dtype"));
    if (p.has("fp8-recipe"))
        pr.precision.scaling =
            p.text("fp8-recipe") == "current" ? m::fp8_scaling::current : m::fp8_scaling::delayed;
    if (p.has("loss-scale"))
        pr.precision.loss_scale = static_cast<float>(p.number("loss-scale"));
    if (p.has("numerics"))
        pr.numerics_steps = static_cast<int>(p.integer("numerics"));
    if (p.has("numerics-floor-runs"))
        pr.floor_runs = static_cast<int>(p.integer("numerics-floor-runs"));
    if (p.has("data-seed"))
        pr.data_seed = p.size("data-seed");
    if (p.has("seeds"))
        pr.seeds = static_cast<int>(p.integer("seeds"));
    if (pr.numerics_steps > 0 && pr.numerics_steps < pr.steps_validate)
        throw config_error(fmt::format("--numerics {}: follow at least --steps-validate ({}) "
                                       "steps, whose check it replaces",
                                       pr.numerics_steps, pr.steps_validate));
    if (pr.numerics_steps > 0 && pr.sequences < 2)
        throw config_error(fmt::format("--numerics: the floor reorders the batch's {} "
                                       "sequence(s); it needs at least 2 (raise --tokens)",
                                       pr.sequences));
}

} // namespace

train_problem read_train_problem(const params& p, int world_size) {
    train_problem pr;
    pr.model.layers = static_cast<std::int64_t>(p.size("layers"));
    pr.model.hidden = static_cast<std::int64_t>(p.size("hidden"));
    pr.model.heads = static_cast<std::int64_t>(p.size("heads"));
    pr.model.vocab = static_cast<std::int64_t>(p.size("vocab"));
    if (p.has("kv-heads")) // absent in older plans
        pr.model.kv_heads = static_cast<std::int64_t>(p.size("kv-heads"));
    if (p.has("ffn"))
        pr.model.ffn = static_cast<std::int64_t>(p.size("ffn"));
    if (p.has("mlp"))
        pr.model.mlp = kernels::model::parse_mlp(p.text("mlp"));
    kernels::model::model_check(pr.model);
    pr.seq_len = static_cast<std::int64_t>(p.size("train-seq-len"));
    pr.scaling = p.text("scaling");
    read_grid(p, world_size, pr);
    const auto tokens = static_cast<std::int64_t>(p.size("tokens"));
    pr.global_tokens =
        pr.scaling == "strong" ? tokens : checked_product(tokens, world_size, "--tokens x ranks");
    pr.sequences = rules::check_batch(pr.global_tokens, pr.seq_len, pr.dp);
    pr.cp_variant = p.text("cp-variant");
    if (p.has("cp-placement"))
        pr.cp_placement = comm::parse_group_placement(p.text("cp-placement"), "cp-placement");
    if (pr.cp > 1) {
        rules::check_cp(pr.cp, pr.cp_variant, pr.model.heads, pr.seq_len);
        read_cp_degree(p, pr);
    }
    pr.dp_set.variant = p.text("dp-variant");
    pr.dp_set.bucket_bytes = p.number("bucket-mb") * 1024 * 1024;
    pr.dp_set.prefetch = p.flag("prefetch");
    const double lr = p.number("lr");
    if (!(lr > 0 && lr < 1))
        throw config_error(fmt::format("--lr: {} is not in (0, 1)", lr));
    pr.dp_set.hp.lr = static_cast<float>(lr);
    pr.steps_validate = static_cast<int>(p.integer("steps-validate"));
    pr.tf32 = p.flag("tf32");
    pr.profile = p.flag("profile");
    read_numerics(p, pr);
    if (p.has("docs")) {
        kernels::mask_spec spec;
        spec.docs = p.text("docs");
        pr.docs = std::make_shared<const kernels::attention_mask>(spec, pr.seq_len, true);
        const auto all = kernels::all_positions(pr.seq_len);
        pr.doc_pairs = kernels::count_visible(pr.docs->view(), true, all, all);
    }
    return pr;
}

std::vector<int> train_problem::grid_order(const comm::node_layout& nodes) const {
    const int world = dp * cp;
    if (cp > 1 && cp < world)
        return comm::group_order(nodes.for_world(world), cp_placement);
    std::vector<int> order(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r)
        order[static_cast<std::size_t>(r)] = r;
    return order;
}

std::string train_problem::placement_note(const comm::node_layout& nodes) const {
    const comm::node_layout l = nodes.for_world(dp * cp);
    if (cp <= 1 || cp_placement != comm::group_placement::node || l.nodes() == 1 ||
        comm::groups_inside_nodes(l, grid_order(l), cp))
        return "";
    return fmt::format("train_step --cp {}: some context-parallel groups span nodes ({}): their "
                       "attention exchange crosses the link between nodes",
                       cp, l.describe());
}

} // namespace ringscale::jobs
