// The rules an attention or training problem must meet before any job plans it, in one place:
// the launcher's planner (jobs/, kernels/) and ringscale-stats' predict both call these, so
// predict refuses exactly what a launch would refuse, with the launch's words.
// Each check throws config_error (one line) naming the option and the value. Pure; no MPI.
#pragma once

#include <cstdint>
#include <string>

namespace ringscale::rules {

/// Declared ranges of the shape options (the launcher's option declarations use them).
inline constexpr std::int64_t max_seq_len = std::int64_t{1} << 30;
inline constexpr std::int64_t max_heads = std::int64_t{1} << 16; ///< heads, kv-heads, batch
inline constexpr std::int64_t max_head_dim = 1024;

/// An identity field's declared range: lo <= value <= hi.
struct size_range {
    std::int64_t lo = 0, hi = 0;
};

/// The declared range of a size field of a case's identity (names as stored: "seq_len",
/// "heads", "kv_heads", "hidden", "dp", ...), as the launcher's options declare it; false when
/// the field has none (not a size).
bool declared_range(const std::string& field, size_range& out);

/// An attention shape: every size >= 1 (kv_heads 0 means heads), heads divisible by
/// kv_heads, head_dim 64 or 128 (the attention kernels' sizes).
void check_attention_shape(std::int64_t seq_len, std::int64_t batch, std::int64_t heads,
                           std::int64_t kv_heads, std::int64_t head_dim);

/// seq_len divisible into the layout's chunks on `ranks` ranks (zigzag: 2 x ranks, the other
/// layouts: ranks); ranks and seq_len at least 1.
void check_layout_chunks(const std::string& layout, std::int64_t seq_len, std::int64_t ranks);

/// train_step's model: every size > 0, hidden divisible by heads into a head dimension of 64
/// or 128, vocab at most 2^30.
void check_model(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab);

/// train_step's grid on `world` ranks: dp (0: world / cp) x cp must be world. Returns dp.
std::int64_t resolve_dp(std::int64_t dp, std::int64_t cp, std::int64_t world);

/// train_step's batch: `global_tokens` a whole number of `seq_len`-token sequences that
/// divide over dp. Returns the sequences.
std::int64_t check_batch(std::int64_t global_tokens, std::int64_t seq_len, std::int64_t dp);

/// train_step's context parallelism over cp > 1 ranks: Ulysses needs heads divisible by cp,
/// every variant seq_len in 2 x cp zigzag chunks.
void check_cp(std::int64_t cp, const std::string& cp_variant, std::int64_t heads,
              std::int64_t seq_len);

} // namespace ringscale::rules
