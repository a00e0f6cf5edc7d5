#include "jobs/train_problem.hpp"

#include "jobs/train_cp.hpp"
#include "kernels/layout.hpp"
#include "kernels/transformer.hpp"
#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::jobs {

const char* flop_convention() {
    return "6 * (parameters except the embedding table) * global tokens + attention "
           "12 * layers * sequences * seq_len^2 * hidden / 2 (causal); fwd+bwd, per step";
}

double train_problem::flops_per_step() const {
    const kernels::param_layout layout(model);
    const double dense = static_cast<double>(layout.total() - layout.unit(0).size);
    const double s = static_cast<double>(seq_len);
    const double attn = 12.0 * model.layers * sequences * s * s * model.hidden / 2;
    return 6.0 * dense * global_tokens + attn;
}

double train_problem::dp_comm_bytes_per_step() const {
    const kernels::param_layout layout(model);
    const int p = dp * cp;
    if (dp_set.variant == "ddp")
        return layout.total() * 4.0;
    if (dp_set.variant == "zero1")
        return 2.0 * padded(layout.total(), p) * 4.0;
    double bytes = 0;
    for (int u = 0; u < layout.units(); ++u)
        bytes += padded(layout.unit(u).size, p) * 4.0 * (u == 0 ? 2 : 3);
    return bytes;
}

double train_problem::cp_comm_bytes_per_step() const {
    if (cp == 1)
        return 0;
    // t tokens of width hidden per rank; one K/V block is 2 x t x hidden floats. A gather,
    // reduce-scatter or all-to-all sends (cp-1)/cp of the group's data from every rank.
    const double t = static_cast<double>(local_sequences() * local_rows());
    const double block = 2.0 * t * model.hidden * 4.0;
    double per_layer = 0;
    if (cp_variant == "ring") // K/V cp-1 hops forward and backward, dK/dV cp hops home
        per_layer = (cp - 1) * block * 2 + cp * block;
    else if (cp_variant == "allgather") // K/V gathered twice, dK/dV reduce-scattered once
        per_layer = 3.0 * (cp - 1) * block;
    else // Q,K,V,O forward; Q,K,V,dO in, dQ,dK,dV out backward; per-row LSE, LSE and delta
        per_layer =
            4.0 * (cp - 1) *
            (11.0 * t * (model.hidden / cp) + 3.0 * t * (model.heads / cp)); // heads % cp = 0
    return per_layer * model.layers;
}

std::uint64_t train_problem::bytes_per_rank(bool validate) const {
    const kernels::param_layout layout(model);
    const double t = static_cast<double>(local_sequences() * local_rows());
    double bytes = dp_state_bytes(dp_set, dp * cp, layout);
    bytes +=
        4.0 * kernels::transformer::activation_floats(model, {local_sequences(), local_rows()});
    bytes += 4.0 * cp_core_floats(cp_variant, cp, t, static_cast<double>(model.hidden));
    bytes += 4.0 * layout.total(); // the initial parameters, kept for validation
    bytes += 4.0 * t * 2;          // token ids and targets
    if (validate) // reference: params, grads, m, v, step-1 gradient; gathered params, grads
        bytes += 4.0 * (7.0 * layout.total() +
                        kernels::transformer::activation_floats(model, {1, seq_len}));
    return static_cast<std::uint64_t>(bytes) + (16u << 20); // attention workspace, slack
}

std::uint64_t train_problem::device_bytes_per_rank(bool validate) const {
    const kernels::param_layout layout(model);
    const double t = static_cast<double>(local_sequences() * local_rows());
    const double h = static_cast<double>(model.hidden);
    double bytes = dp_state_bytes(dp_set, dp * cp, layout);
    bytes +=
        4.0 * kernels::transformer::activation_floats(model, {local_sequences(), local_rows()});
    bytes += 4.0 * t * (model.heads + 1);           // attention delta, per-row losses
    bytes += 2.0 * 4 * t * h;                       // bf16 Q, K|V, dO
    bytes += 4.0 * t * 2;                           // token ids and targets
    bytes += 4.0 * padded(layout.total(), dp * cp); // gathered gradient (validation, ZeRO-1)
    if (validate) { // the reference on this device: params, grads, m, v; one sequence
        const double s = static_cast<double>(seq_len);
        bytes += 4.0 * (4.0 * layout.total() +
                        kernels::transformer::activation_floats(model, {1, seq_len}));
        bytes += 4.0 * s * (model.heads + 1) + 2.0 * 4 * s * h + 4.0 * s * 2;
    }
    return static_cast<std::uint64_t>(bytes) + (64u << 20); // cuBLAS workspace, slack
}

void check_train_device(const train_problem& pr, const std::string& device) {
    if (device != "cpu" && pr.cp > 1 && pr.cp_variant != "ring")
        throw config_error(cp_device_refusal(pr.cp_variant, device));
    if (device == "cpu" && pr.tf32)
        throw config_error("--tf32 on needs --device cuda (TF32 is a GPU tensor-core mode; the "
                           "CPU kernels compute in fp32)");
    if (device != "cpu" && pr.profile)
        throw config_error("--profile on needs --device cpu (it times each operation on the host "
                           "clock; device kernels run asynchronously)");
}

std::vector<option_spec> train_options() {
    return {
        {"layers", "4", "transformer blocks L"},
        {"hidden", "512", "model width in features (hidden / heads must be 64 or 128)"},
        {"heads", "8", "query heads H"},
        {"vocab", "1024", "vocabulary size in tokens"},
        {"train-seq-len", "512",
         "train_step: sequence length in tokens (the attention jobs' --seq-len is separate)"},
        {"tokens", "4096", "train_step: global batch in tokens per step (weak scaling: per rank)"},
        {"scaling", "strong", "strong (global batch fixed) | weak (per-rank batch fixed)"},
        {"dp", "0", "data-parallel ranks (0 = ranks / cp)"},
        {"cp", "1", "context-parallel ranks per replica (dp x cp = ranks)"},
        {"dp-variant", "ddp", "ddp | zero1 | fsdp (list ok)"},
        {"cp-variant", "ring", "attention across cp ranks: ring | allgather | ulysses"},
        {"bucket-mb", "25", "DDP gradient bucket size in MiB"},
        {"prefetch", "off", "FSDP: gather the next layer's parameters early (on/off)"},
        {"lr", "0.001", "AdamW learning rate"},
        {"steps-validate", "3", "training steps compared with the single-rank run"},
        {"tf32", "off",
         "train_step on cuda: let fp32 GEMMs use TF32 tensor cores (on/off; recorded with the "
         "case)"},
        {"profile", "off",
         "train_step on the CPU: time every operation of the step on rank 0 (on/off; recorded "
         "as profile_* attributes, shown by ringscale-stats profile)"}};
}

std::vector<std::string> train_sweep_names() {
    return {"layers", "hidden", "heads",      "vocab",      "train-seq-len", "tokens",
            "dp",     "cp",     "dp-variant", "cp-variant", "prefetch",      "bucket-mb"};
}

namespace {
void read_grid(const params& p, int world, train_problem& pr) {
    pr.cp = static_cast<int>(p.positive_size("cp"));
    const auto dp = static_cast<std::int64_t>(p.size("dp"));
    if (dp == 0 && world % pr.cp != 0)
        throw config_error(fmt::format("--cp {} does not divide the {} ranks", pr.cp, world));
    pr.dp = dp == 0 ? world / pr.cp : static_cast<int>(dp);
    if (static_cast<std::int64_t>(pr.dp) * pr.cp != world)
        throw config_error(fmt::format("--dp {} x --cp {} = {}, but the launch has {} ranks", pr.dp,
                                       pr.cp, pr.dp * pr.cp, world));
}
} // namespace

train_problem read_train_problem(const params& p, int world_size) {
    train_problem pr;
    pr.model.layers = static_cast<std::int64_t>(p.positive_size("layers"));
    pr.model.hidden = static_cast<std::int64_t>(p.positive_size("hidden"));
    pr.model.heads = static_cast<std::int64_t>(p.positive_size("heads"));
    pr.model.vocab = static_cast<std::int64_t>(p.positive_size("vocab"));
    kernels::model_check(pr.model);
    pr.seq_len = static_cast<std::int64_t>(p.positive_size("train-seq-len"));
    pr.scaling = p.choice("scaling", {"strong", "weak"});
    read_grid(p, world_size, pr);
    const auto tokens = static_cast<std::int64_t>(p.positive_size("tokens"));
    pr.global_tokens = pr.scaling == "strong" ? tokens : tokens * world_size;
    if (pr.global_tokens % pr.seq_len != 0)
        throw config_error(fmt::format("global batch of {} tokens is not a whole number of "
                                       "{}-token sequences",
                                       pr.global_tokens, pr.seq_len));
    pr.sequences = pr.global_tokens / pr.seq_len;
    if (pr.sequences % pr.dp != 0)
        throw config_error(fmt::format("global batch of {} tokens ({} sequences) is not "
                                       "divisible over {} data-parallel ranks",
                                       pr.global_tokens, pr.sequences, pr.dp));
    pr.cp_variant = p.choice("cp-variant", {"ring", "allgather", "ulysses"});
    if (pr.cp > 1) {
        if (pr.cp_variant == "ulysses" && pr.model.heads % pr.cp != 0)
            throw config_error(fmt::format("--cp-variant ulysses: heads ({}) must be divisible "
                                           "by cp ({})",
                                           pr.model.heads, pr.cp));
        kernels::check_layout(kernels::layout::zigzag, pr.seq_len, pr.cp);
    }
    pr.dp_set.variant = p.choice("dp-variant", {"ddp", "zero1", "fsdp"});
    const double mb = p.number("bucket-mb");
    if (!(mb > 0))
        throw config_error("--bucket-mb: must be greater than zero");
    pr.dp_set.bucket_bytes = mb * 1024 * 1024;
    pr.dp_set.prefetch = p.flag("prefetch");
    const double lr = p.number("lr");
    if (!(lr > 0 && lr < 1))
        throw config_error(fmt::format("--lr: {} is not in (0, 1)", lr));
    pr.dp_set.hp.lr = static_cast<float>(lr);
    const std::int64_t sv = p.integer("steps-validate");
    if (sv < 1 || sv > 1000)
        throw config_error(fmt::format("--steps-validate: {} is not in [1, 1000]", sv));
    pr.steps_validate = static_cast<int>(sv);
    pr.tf32 = p.flag("tf32");
    pr.profile = p.flag("profile");
    return pr;
}

} // namespace ringscale::jobs
