// Exact counts of the (query, key) pairs a mask leaves visible (kernels/mask.hpp), for FLOP
// counts, the work each rank gets, load balancing and the ring's schedule. Positions are
// sorted global token positions, as the attention kernels take them. Host code.
#pragma once

#include "kernels/mask.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::kernels {

/// The number of pairs (q[i], k[j]) visible under `m` and `causal`. Cost: O(nq log nk) for
/// causal, window and documents; block-sparse adds one look per (query block, key block)
/// pair the positions touch; dilation visits, per query, the keys of its segments.
std::int64_t count_visible(const mask_view& m, bool causal, const std::int64_t* q, std::int64_t nq,
                           const std::int64_t* k, std::int64_t nk);

/// count_visible of two position vectors.
std::int64_t count_visible(const mask_view& m, bool causal, const std::vector<std::int64_t>& q,
                           const std::vector<std::int64_t>& k);

/// Whether any pair is visible (count_visible > 0, deciding early where the tiles allow).
bool any_visible(const mask_view& m, bool causal, const std::int64_t* q, std::int64_t nq,
                 const std::int64_t* k, std::int64_t nk);
bool any_visible(const mask_view& m, bool causal, const std::vector<std::int64_t>& q,
                 const std::vector<std::int64_t>& k);

/// 0, 1, ..., n - 1: every position of a sequence of n tokens.
std::vector<std::int64_t> all_positions(std::int64_t n);

} // namespace ringscale::kernels
