// The mask a user describes (--window, --docs, --sparsity with --sparse-pattern and
// --sparse-block, --dilation), its checks, and the arrays it becomes for one sequence length
// (attention_mask, which hands kernels a mask_view: kernels/mask.hpp). Everything seeded is
// seeded by the description itself, so equal descriptions give equal masks whatever the
// launch's --seed: a case's identity fixes its mask.
#pragma once

#include "kernels/mask.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::kernels {

/// A mask as the user gave it. Each rule is off at its default.
struct mask_spec {
    std::int64_t window = 0;        ///< --window W (0: none)
    std::string docs;               ///< --docs SPEC ("": none)
    double sparsity = -1;           ///< --sparsity F in [0, 1) (< 0: none)
    std::string pattern = "random"; ///< --sparse-pattern: random | local_global
    std::int64_t block = 128;       ///< --sparse-block B in tokens
    std::string dilation;           ///< --dilation SPEC ("": none)

    /// True when any rule is given.
    bool any() const;
    /// Short text for tables: "-" without a rule, else e.g. "win=512 docs=1K+3K sparse=0.9".
    std::string label() const;
};

/// The most documents --docs may cut a sequence into: their lengths and starts are held
/// while planning (2^22 documents: 64 MiB).
inline constexpr std::int64_t max_docs = std::int64_t{1} << 22;

/// The most documents --docs `spec` makes of `seq_len` tokens, from the spec alone (nothing
/// allocated): fixed:L ceil(S / L), uniform:LO-HI ceil(S / LO), a list its items.
/// config_error for a malformed length.
std::int64_t doc_count_bound(const std::string& spec, std::int64_t seq_len);

/// Host bytes planning a case with mask `spec` on `seq_len` tokens needs before its own
/// buffers (the positions of every rank, document lengths and starts, kept block pairs), from
/// the spec alone: the planner refuses a mask too large for a rank's memory before making it.
/// config_error as doc_lengths for a malformed spec or more than max_docs documents.
std::uint64_t mask_plan_bytes(const mask_spec& spec, std::int64_t seq_len);

/// Document lengths of --docs `spec` in a sequence of `seq_len` tokens, in order:
///   fixed:L       documents of L tokens (the last takes what remains);
///   uniform:LO-HI lengths drawn uniformly from LO, LO+g, ..., HI, g the largest power of two
///                 <= 1024 dividing LO and HI, seeded by the spec (the last takes what remains);
///   L1+L2+...     these lengths, which must sum to seq_len.
/// Lengths take K/M suffixes. config_error (one line naming --docs) for a malformed spec, more
/// than max_docs documents (checked first, before anything is allocated), a document longer
/// than the sequence, or explicit lengths that do not sum to it.
std::vector<std::int64_t> doc_lengths(const std::string& spec, std::int64_t seq_len);

/// One dilation pattern: segments of `segment` tokens, every `rate`-th token of each.
struct dilation_pattern {
    std::int64_t segment = 1, rate = 1;
};

/// --dilation `spec`: "w:r+w:r..." (w with K/M suffixes), at most max_dilations patterns.
/// config_error for a malformed spec or a rate that does not divide its segment.
std::vector<dilation_pattern> parse_dilation(const std::string& spec);

/// Throws config_error (one line naming the option) unless `spec` can mask a sequence of
/// `seq_len` tokens: window >= 1 when given, sparsity in [0, 1), the pattern known, the block
/// >= 1 with at most 2^26 block pairs, --docs and --dilation as above.
void check_mask_spec(const mask_spec& spec, std::int64_t seq_len);

/// Kept block pairs [blocks * blocks] (row: query block) of the block-sparse rule. Candidate
/// pairs are all of them, or those with key block <= query block when `causal`. random: each
/// candidate masked with probability F by a hash seeded by the spec; local_global (Longformer,
/// BigBird): the first block's row and column (global) and a band |i - j| <= w, w the
/// smallest keeping at least 1 - F of the candidates. Non-candidates are not kept.
std::vector<std::uint8_t> sparse_blocks(const mask_spec& spec, std::int64_t seq_len, bool causal);

/// A mask_spec made concrete for one sequence length: the arrays a mask_view points to.
class attention_mask {
  public:
    /// No mask beyond the causal flag.
    attention_mask() = default;
    /// `spec` for `seq_len` tokens (check_mask_spec's errors).
    attention_mask(const mask_spec& spec, std::int64_t seq_len, bool causal);

    /// The view kernels take (host pointers into this object; no device copies: a dev_mask,
    /// kernels/dev_mask.hpp, adds them for the CUDA kernels).
    mask_view view() const;
    const mask_spec& spec() const { return m_spec; }
    std::int64_t seq_len() const { return m_seq_len; }
    bool causal() const { return m_causal; }
    /// Document starts and then seq_len ([docs + 1]); empty without --docs.
    const std::vector<std::int64_t>& doc_starts() const { return m_doc_start; }
    /// Kept block pairs; empty without --sparsity.
    const std::vector<std::uint8_t>& keep() const { return m_keep; }
    /// The fraction of candidate block pairs the pattern masks (NaN without --sparsity).
    double block_sparsity() const;

  private:
    mask_spec m_spec;
    std::int64_t m_seq_len = 0;
    bool m_causal = false;
    std::vector<std::int64_t> m_doc_start;
    std::vector<std::uint8_t> m_keep;
    std::vector<dilation_pattern> m_dilation;
};

} // namespace ringscale::kernels
