#include "checked_count.hpp"

#include "error.hpp"
#include "parse.hpp"
#include "text_escape.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale {

namespace {

std::string bound_text(std::int64_t v) {
    if (v > 1024 && (v & (v - 1)) == 0)
        return fmt::format("{} (2^{})", v, __builtin_ctzll(static_cast<unsigned long long>(v)));
    return std::to_string(v);
}

} // namespace

std::string range_text(std::int64_t lo, std::int64_t hi) {
    return fmt::format("{} to {}", bound_text(lo), bound_text(hi));
}

std::int64_t count_in_range(std::int64_t value, std::int64_t lo, std::int64_t hi,
                            const std::string& what) {
    if (value < lo || value > hi)
        throw config_error(
            fmt::format("{}: {} is out of range ({})", what, value, range_text(lo, hi)));
    return value;
}

std::int64_t whole_in_range(double value, std::int64_t lo, std::int64_t hi,
                            const std::string& what) {
    if (!std::isfinite(value) || value != std::floor(value))
        throw config_error(fmt::format("{}: {} is not a whole number", what, value));
    // Compared as doubles first: a value beyond 2^63 must not reach the cast.
    if (value < static_cast<double>(lo) || value > static_cast<double>(hi))
        throw config_error(
            fmt::format("{}: {:g} is out of range ({})", what, value, range_text(lo, hi)));
    return static_cast<std::int64_t>(value);
}

std::int64_t parse_count(const std::string& text, std::int64_t lo, std::int64_t hi,
                         const std::string& what) {
    std::uint64_t v = 0;
    try {
        v = parse_size(text, what);
    } catch (const config_error& e) {
        // parse_size's "is too large": digits beyond 64 bits are a count out of range too.
        if (std::string(e.what()).find("too large") == std::string::npos)
            throw config_error(fmt::format("{}: '{}' is not a whole number", what,
                                           terminal_text(text.substr(0, 40))));
        v = UINT64_MAX;
    }
    if (v > static_cast<std::uint64_t>(hi))
        throw config_error(fmt::format("{}: {} is out of range ({})", what,
                                       terminal_text(text.substr(0, 40)), range_text(lo, hi)));
    return count_in_range(static_cast<std::int64_t>(v), lo, hi, what);
}

std::int64_t checked_sum(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out))
        throw config_error(fmt::format("{}: {} + {} is too large", what, a, b));
    return out;
}

} // namespace ringscale
