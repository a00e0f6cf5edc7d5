// The declared range of every count of ranks (P, nodes, ranks per node) that the launcher's
// planner, ringscale-stats' predict and its hardware profiles derive, and checked arithmetic
// on counts: a value out of range or a product that overflows is one config_error line,
// never a wrapped number that prices or plans something else. Pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace ringscale {

/// The most ranks, nodes or ranks per node any count may hold: 2^24 (16M GPUs is beyond
/// every machine built; the products of two such counts stay far inside 64 bits).
inline constexpr std::int64_t max_ranks = std::int64_t{1} << 24;

/// `value` when lo <= value <= hi, else config_error "<what>: <value> is out of range (lo to
/// hi)".
std::int64_t count_in_range(std::int64_t value, std::int64_t lo, std::int64_t hi,
                            const std::string& what);

/// `value` as a whole number in [lo, hi]; config_error for NaN, an infinity, a fraction or a
/// value out of range (named `what`, the value as given).
std::int64_t whole_in_range(double value, std::int64_t lo, std::int64_t hi,
                            const std::string& what);

/// Parse `text` as a count in [lo, hi]: decimal digits with an optional K/M/G/T suffix (as
/// parse_size). config_error "<what>: '<text>' is not a whole number" when malformed (a sign,
/// a fraction, too many digits for 64 bits) and count_in_range's message when out of range.
std::int64_t parse_count(const std::string& text, std::int64_t lo, std::int64_t hi,
                         const std::string& what);

/// a + b; config_error "<what>: a + b is too large" on overflow.
std::int64_t checked_sum(std::int64_t a, std::int64_t b, const std::string& what);

/// The range as text: "1 to 16777216 (2^24)" style (a power of two named as such).
std::string range_text(std::int64_t lo, std::int64_t hi);

} // namespace ringscale
