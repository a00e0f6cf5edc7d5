// Parsing and formatting of the numbers users type: sizes with K/M/G suffixes, comma lists.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringscale {

/// Split "a,b,c" into trimmed items; an empty item is a config_error naming `option`.
std::vector<std::string> split_list(const std::string& text, const std::string& option);

/// Parse a non-negative size with an optional binary suffix (K=2^10, M=2^20, G=2^30, T=2^40),
/// e.g. "64", "1K", "16M". Throws config_error naming `option` on malformed or negative input.
std::uint64_t parse_size(const std::string& text, const std::string& option);

/// Parse a signed integer (no suffix); config_error naming `option` when malformed.
std::int64_t parse_int(const std::string& text, const std::string& option);

/// Parse a finite floating-point number; config_error naming `option` when malformed.
double parse_double(const std::string& text, const std::string& option);

/// Parse on/off, true/false, yes/no, 1/0.
bool parse_bool(const std::string& text, const std::string& option);

/// a * b; config_error "{what}: {a} x {b} is too large" when the product overflows.
std::int64_t checked_product(std::int64_t a, std::int64_t b, const std::string& what);
std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const std::string& what);

/// A byte count estimated in floating point, as whole bytes: UINT64_MAX when it does not fit
/// (NaN included), so a memory preflight refuses it rather than a cast wrapping it around.
std::uint64_t bytes_from_estimate(double bytes);

/// "1.5 MiB" style rendering of a byte count.
std::string format_bytes(double bytes);

/// Compact size as typed on the command line: 1024 -> "1K", 1536 -> "1536".
std::string format_size(std::uint64_t bytes);

/// "12.3 us", "4.56 ms", "1.23 s" rendering of a duration in seconds.
std::string format_seconds(double seconds);

/// Whether `key` may name a launch label: 1 to 64 of [A-Za-z0-9_.-].
bool valid_label_key(const std::string& key);

/// "key=value" of `ringscale --label` as {key, value}: a valid_label_key, then a value of at
/// most 256 bytes with no control character. config_error naming --label otherwise.
std::pair<std::string, std::string> parse_label(const std::string& text);

/// 64-bit FNV-1a hash of a byte string: stable across processes and builds.
std::uint64_t fnv1a64(const std::string& text);

} // namespace ringscale
