// Seeded, position-addressed random inputs: element i of a global tensor has the same
// value whichever rank generates it, so each rank fills only its shard and the
// single-rank reference fills the whole tensor identically.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels {

/// SplitMix64 finaliser: a well-mixed 64-bit hash of `x`.
inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// Uniform value in [-1, 1) for element `index` of the stream `seed`.
inline float uniform_at(std::uint64_t seed, std::uint64_t index) {
    const std::uint64_t bits = mix64(seed ^ mix64(index)) >> 40; // 24 random bits
    return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

/// out[k] = scale * uniform_at(seed, first_index + k) for k < n.
inline void fill_uniform(float* out, std::size_t n, std::uint64_t seed, std::uint64_t first_index,
                         float scale = 1.0f) {
    for (std::size_t k = 0; k < n; ++k)
        out[k] = scale * uniform_at(seed, first_index + k);
}

} // namespace ringscale::kernels
