// The small transformer of the training step: its configuration, the flat parameter buffer
// (one contiguous fp32 array, unit by unit, so DDP buckets, ZeRO-1 shards and FSDP per-unit
// shards are all slices of it), seeded initial values and the seeded synthetic token data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::kernels::model {

/// The MLP of every block: GELU (tanh form) of one up projection, or SwiGLU (Llama's:
/// silu(gate) * up, gate and up stacked in one projection of twice the FFN width).
enum class mlp_kind { gelu, swiglu };

/// "gelu" | "swiglu".
const char* mlp_name(mlp_kind k);
/// The inverse of mlp_name; config_error (one line) for anything else.
mlp_kind parse_mlp(const std::string& name);

/// Model size: `layers` blocks of width `hidden` with `heads` query heads sharing
/// `kv_heads` K/V heads (grouped-query attention; 0: as many as heads), an MLP of `ffn`
/// features (0: 4 x hidden), and a `vocab`-token embedding and output projection.
struct model_config {
    std::int64_t layers = 4;
    std::int64_t hidden = 512;
    std::int64_t heads = 8;
    std::int64_t vocab = 1024;
    std::int64_t kv_heads = 0;     ///< K/V heads (GQA); 0: heads
    std::int64_t ffn = 0;          ///< MLP width in features; 0: 4 x hidden
    mlp_kind mlp = mlp_kind::gelu; ///< the MLP's activation
    float eps = 1e-5f;             ///< RMSNorm epsilon
    std::int64_t head_dim() const { return hidden / heads; }
    /// K/V heads in use (kv_heads, or heads when 0).
    std::int64_t kv_count() const { return kv_heads > 0 ? kv_heads : heads; }
    /// Features of K (and of V): kv_count() x head_dim().
    std::int64_t kv_width() const { return kv_count() * head_dim(); }
    /// Outputs of the QKV projection: hidden + 2 x kv_width().
    std::int64_t qkv_width() const { return hidden + 2 * kv_width(); }
    /// The MLP's width (ffn, or 4 x hidden when 0): the down projection's inputs.
    std::int64_t ffn_width() const { return ffn > 0 ? ffn : 4 * hidden; }
    /// Outputs of the up projection: ffn_width(), twice that for SwiGLU (gate, then up).
    std::int64_t ffn_up() const { return (mlp == mlp_kind::swiglu ? 2 : 1) * ffn_width(); }
};

/// Throws config_error (one line) unless every size is > 0, hidden is divisible by heads
/// and hidden / heads is a head dimension the CPU attention kernel supports (64 or 128),
/// kv_heads (when set) divides heads and ffn is >= 0.
void model_check(const model_config& cfg);

/// One unit's slice of the flat buffer: elements [offset, offset + size).
struct param_unit {
    std::size_t offset = 0;
    std::size_t size = 0;
};

/// Offsets of one block's tensors from the block's first element (h = hidden, q = qkv_width(),
/// u = ffn_up(), f = ffn_width()): norm1 [h], wqkv [q, h] (Q's h rows, then K's and V's
/// kv_width() each), wo [h, h], bo [h], norm2 [h], w1 [u, h] (SwiGLU: the gate's f rows, then
/// the up projection's), b1 [u], w2 [h, f], b2 [h]. The QKV projection has no bias: a key bias
/// shifts every score of a query row by the same amount, so its gradient is exactly zero in exact
/// arithmetic and pure rounding noise in fp32, which AdamW's normalisation would turn into lr-sized
/// random updates.
struct block_offsets {
    std::size_t norm1, wqkv, wo, bo, norm2, w1, b1, w2, b2, size;
};

/// Offsets of the head's tensors: final norm [h], output projection wout [vocab, h], bout [vocab].
struct head_offsets {
    std::size_t norm, wout, bout, size;
};

/// The flat layout: unit 0 is the embedding table [vocab, h], units 1..L the blocks, unit
/// L+1 the head. Units are contiguous and in forward order.
class param_layout {
  public:
    explicit param_layout(const model_config& cfg);
    std::size_t total() const { return m_total; }
    int units() const { return static_cast<int>(m_units.size()); }
    const param_unit& unit(int u) const { return m_units.at(static_cast<std::size_t>(u)); }
    int head_unit() const { return units() - 1; }
    const block_offsets& block() const { return m_block; }
    const head_offsets& head() const { return m_head; }
    /// Largest unit in elements (FSDP's gather buffer).
    std::size_t max_unit() const;

  private:
    std::vector<param_unit> m_units;
    block_offsets m_block{};
    head_offsets m_head{};
    std::size_t m_total = 0;
};

/// Seeded initial parameters: norms 1, biases 0, embedding U(-1, 1), weights
/// U(-1, 1) / sqrt(fan_in). Same values for the same seed on every rank. Writes flat[total].
void init_params(const model_config& cfg, const param_layout& layout, std::uint64_t seed,
                 float* flat);

/// Synthetic data: sequence n is an arithmetic progression mod vocab with a seeded start and
/// a seeded stride (1..7), so the next token is learnable from context (attention helps).
/// token_at is the input id at position `pos`; target_at is the id at pos + 1.
std::int32_t token_at(std::uint64_t seed, std::int64_t vocab, std::int64_t seq, std::int64_t pos);
std::int32_t target_at(std::uint64_t seed, std::int64_t vocab, std::int64_t seq, std::int64_t pos);

} // namespace ringscale::kernels::model
