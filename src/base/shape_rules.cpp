#include "shape_rules.hpp"

#include "checked_count.hpp"
#include "error.hpp"
#include "parse.hpp"

#include <fmt/format.h>
#include <map>

namespace ringscale::rules {

bool declared_range(const std::string& field, size_range& out) {
    static const std::map<std::string, size_range> ranges = {
        {"seq_len", {1, max_seq_len}},
        {"seq_len_per_rank", {1, max_seq_len}},
        {"batch", {1, max_heads}},
        {"heads", {1, max_heads}},
        {"kv_heads", {0, max_heads}},
        {"head_dim", {1, max_head_dim}},
        {"ulysses_degree", {0, std::int64_t{1} << 20}},
        {"layers", {1, 1024}},
        {"hidden", {1, std::int64_t{1} << 16}},
        {"vocab", {1, std::int64_t{1} << 24}},
        {"train_seq_len", {1, std::int64_t{1} << 24}},
        {"tokens", {1, std::int64_t{1} << 40}},
        {"dp", {0, std::int64_t{1} << 20}},
        {"cp", {1, std::int64_t{1} << 20}},
        {"threads", {0, 1024}},
        {"requested_bytes", {1, std::int64_t{1} << 50}}};
    const auto it = ranges.find(field);
    if (it == ranges.end())
        return false;
    out = it->second;
    return true;
}

void check_attention_shape(std::int64_t seq_len, std::int64_t batch, std::int64_t heads,
                           std::int64_t kv_heads, std::int64_t head_dim) {
    count_in_range(seq_len, 1, max_seq_len, "--seq-len");
    count_in_range(batch, 1, max_heads, "--batch");
    count_in_range(heads, 1, max_heads, "--heads");
    count_in_range(kv_heads, 0, max_heads, "--kv-heads");
    count_in_range(head_dim, 1, max_head_dim, "--head-dim");
    if (kv_heads == 0)
        kv_heads = heads;
    if (heads % kv_heads != 0)
        throw config_error(
            fmt::format("--heads {} is not divisible by --kv-heads {}", heads, kv_heads));
    if (head_dim != 64 && head_dim != 128)
        throw config_error(
            fmt::format("--head-dim: {} is not supported (use 64 or 128)", head_dim));
}

void check_layout_chunks(const std::string& layout, std::int64_t seq_len, std::int64_t ranks) {
    if (ranks < 1)
        throw config_error(fmt::format("layout needs at least 1 rank, got {}", ranks));
    if (seq_len < 1)
        throw config_error(fmt::format("seq_len must be >= 1, got {}", seq_len));
    const std::int64_t parts =
        layout == "zigzag" ? checked_product(std::int64_t{2}, ranks, "zigzag chunks") : ranks;
    if (seq_len % parts != 0)
        throw config_error(fmt::format("{} layout needs seq_len divisible by {}, got seq_len={} "
                                       "with {} ranks",
                                       layout, parts, seq_len, ranks));
}

void check_model(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab) {
    if (layers <= 0 || hidden <= 0 || heads <= 0 || vocab <= 0)
        throw config_error("train_step: --layers, --hidden, --heads and --vocab must be > 0");
    if (hidden % heads != 0)
        throw config_error(
            fmt::format("--hidden {} is not divisible by --heads {}", hidden, heads));
    const std::int64_t head_dim = hidden / heads;
    if (head_dim != 64 && head_dim != 128)
        throw config_error(fmt::format("--hidden {} / --heads {} = head dimension {}: the CPU "
                                       "attention kernel supports 64 or 128",
                                       hidden, heads, head_dim));
    if (vocab > (std::int64_t{1} << 30))
        throw config_error(fmt::format("--vocab {} is too large", vocab));
}

std::int64_t resolve_dp(std::int64_t dp, std::int64_t cp, std::int64_t world) {
    if (cp < 1)
        throw config_error(fmt::format("--cp: {} is out of range (at least 1)", cp));
    if (dp == 0 && world % cp != 0)
        throw config_error(fmt::format("--cp {} does not divide the {} ranks", cp, world));
    const std::int64_t resolved = dp == 0 ? world / cp : dp;
    const std::int64_t product = checked_product(resolved, cp, "--dp x --cp");
    if (product != world)
        throw config_error(fmt::format("--dp {} x --cp {} = {}, but the launch has {} ranks",
                                       resolved, cp, product, world));
    return resolved;
}

std::int64_t check_batch(std::int64_t global_tokens, std::int64_t seq_len, std::int64_t dp) {
    if (seq_len < 1 || global_tokens % seq_len != 0)
        throw config_error(fmt::format("global batch of {} tokens is not a whole number of "
                                       "{}-token sequences",
                                       global_tokens, seq_len));
    const std::int64_t sequences = global_tokens / seq_len;
    if (dp < 1 || sequences % dp != 0)
        throw config_error(fmt::format("global batch of {} tokens ({} sequences) is not "
                                       "divisible over {} data-parallel ranks",
                                       global_tokens, sequences, dp));
    return sequences;
}

void check_cp(std::int64_t cp, const std::string& cp_variant, std::int64_t heads,
              std::int64_t seq_len) {
    if (cp <= 1)
        return;
    if (cp_variant == "ulysses" && heads % cp != 0)
        throw config_error(fmt::format("--cp-variant ulysses: heads ({}) must be divisible by cp "
                                       "({})",
                                       heads, cp));
    check_layout_chunks("zigzag", seq_len, cp);
}

} // namespace ringscale::rules
