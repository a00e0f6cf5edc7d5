#include "parse.hpp"

#include "error.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>

namespace ringscale {

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return s.substr(b, e - b);
}

[[noreturn]] void bad_number(const std::string& option, const std::string& text,
                             const char* expected) {
    throw config_error(fmt::format("--{}: '{}' is not {}", option, text, expected));
}

} // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        std::string item = trim(text.substr(start, comma - start));
        if (item.empty())
            throw config_error(fmt::format("--{}: empty item in list '{}'", option, text));
        items.push_back(item);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return items;
}

std::uint64_t parse_size(const std::string& raw, const std::string& option) {
    const std::string text = trim(raw);
    const char* expected = "a size (a whole number, optionally with K, M, G or T)";
    if (text.empty() || text[0] == '-' || text[0] == '+')
        bad_number(option, raw, expected);
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
        ++digits;
    if (digits == 0)
        bad_number(option, raw, expected);
    std::uint64_t shift = 0;
    const std::string suffix = text.substr(digits);
    if (suffix == "" || suffix == "B")
        shift = 0;
    else if (suffix == "K" || suffix == "k" || suffix == "KiB")
        shift = 10;
    else if (suffix == "M" || suffix == "MiB")
        shift = 20;
    else if (suffix == "G" || suffix == "GiB")
        shift = 30;
    else if (suffix == "T" || suffix == "TiB")
        shift = 40;
    else
        bad_number(option, raw, expected);
    errno = 0;
    const unsigned long long value = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
    if (errno == ERANGE ||
        (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)))
        throw config_error(fmt::format("--{}: '{}' is too large", option, raw));
    return static_cast<std::uint64_t>(value) << shift;
}

std::int64_t parse_int(const std::string& raw, const std::string& option) {
    const std::string text = trim(raw);
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)
        bad_number(option, raw, "a whole number");
    return value;
}

double parse_double(const std::string& raw, const std::string& option) {
    const std::string text = trim(raw);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
        bad_number(option, raw, "a number");
    return value;
}

bool parse_bool(const std::string& raw, const std::string& option) {
    const std::string t = trim(raw);
    if (t == "1" || t == "on" || t == "true" || t == "yes")
        return true;
    if (t == "0" || t == "off" || t == "false" || t == "no")
        return false;
    throw config_error(fmt::format("--{}: '{}' is not on/off", option, raw));
}

std::int64_t checked_product(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        throw config_error(fmt::format("{}: {} x {} is too large", what, a, b));
    return out;
}

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const std::string& what) {
    std::uint64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
        throw config_error(fmt::format("{}: {} x {} is too large", what, a, b));
    return out;
}

std::uint64_t bytes_from_estimate(double bytes) {
    // 2^64 as a double; anything at or above it (or NaN) does not fit.
    constexpr double limit = 18446744073709551616.0;
    if (!(bytes < limit))
        return std::numeric_limits<std::uint64_t>::max();
    return bytes <= 0 ? 0 : static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (std::fabs(bytes) >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        ++u;
    }
    return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string format_size(std::uint64_t bytes) {
    const char* suffix[] = {"", "K", "M", "G", "T"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++u;
    }
    return fmt::format("{}{}", bytes, suffix[u]);
}

std::string format_seconds(double s) {
    if (s < 1e-3)
        return fmt::format("{:.1f} us", s * 1e6);
    if (s < 1.0)
        return fmt::format("{:.2f} ms", s * 1e3);
    return fmt::format("{:.2f} s", s);
}

bool valid_label_key(const std::string& key) {
    if (key.empty() || key.size() > 64)
        return false;
    for (const unsigned char c : key)
        if (!std::isalnum(c) && c != '_' && c != '.' && c != '-')
            return false;
    return true;
}

std::pair<std::string, std::string> parse_label(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos)
        throw config_error("--label: give key=value (e.g. --label nccl=2.21)");
    std::string key = text.substr(0, eq), value = text.substr(eq + 1);
    if (!valid_label_key(key))
        throw config_error("--label: a key is 1 to 64 letters, digits, '_', '.' or '-'");
    if (value.size() > 256)
        throw config_error("--label: a value is at most 256 bytes");
    for (const unsigned char c : value)
        if (c < 0x20 || c == 0x7f)
            throw config_error("--label: a value holds no control character");
    return {std::move(key), std::move(value)};
}

std::uint64_t fnv1a64(const std::string& text) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

} // namespace ringscale
