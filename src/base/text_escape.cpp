#include "text_escape.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace ringscale {

namespace {

unsigned char byte_at(const std::string& s, std::size_t i) {
    return i < s.size() ? static_cast<unsigned char>(s[i]) : 0;
}

bool continuation(unsigned char b, unsigned char lo = 0x80, unsigned char hi = 0xbf) {
    return b >= lo && b <= hi;
}

/// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates,
/// nothing above U+10FFFF), or 0 when the byte there starts none.
std::size_t utf8_length(const std::string& s, std::size_t i) {
    const unsigned char b = byte_at(s, i), c1 = byte_at(s, i + 1);
    const unsigned char c2 = byte_at(s, i + 2), c3 = byte_at(s, i + 3);
    if (b < 0x80)
        return 1;
    if (b >= 0xc2 && b <= 0xdf)
        return continuation(c1) ? 2 : 0;
    if (b >= 0xe0 && b <= 0xef) {
        const unsigned char lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
        return continuation(c1, lo, hi) && continuation(c2) ? 3 : 0;
    }
    if (b >= 0xf0 && b <= 0xf4) {
        const unsigned char lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
        return continuation(c1, lo, hi) && continuation(c2) && continuation(c3) ? 4 : 0;
    }
    return 0;
}

/// The code point of a valid 2-, 3- or 4-byte sequence at s[i].
std::uint32_t code_point(const std::string& s, std::size_t i, std::size_t len) {
    if (len == 2)
        return (byte_at(s, i) & 0x1fu) << 6 | (byte_at(s, i + 1) & 0x3fu);
    if (len == 3)
        return (byte_at(s, i) & 0x0fu) << 12 | (byte_at(s, i + 1) & 0x3fu) << 6 |
               (byte_at(s, i + 2) & 0x3fu);
    return (byte_at(s, i) & 0x07u) << 18 | (byte_at(s, i + 1) & 0x3fu) << 12 |
           (byte_at(s, i + 2) & 0x3fu) << 6 | (byte_at(s, i + 3) & 0x3fu);
}

/// Unicode's format characters (general category Cf, Unicode 15.1): zero-width spaces and
/// joiners, the soft hyphen, the bidirectional marks, embeddings, overrides and isolates,
/// tags. Invisible, they make two labels that differ read alike.
bool format_character(std::uint32_t cp) {
    static const std::uint32_t ranges[][2] = {
        {0xad, 0xad},       {0x600, 0x605},     {0x61c, 0x61c},     {0x6dd, 0x6dd},
        {0x70f, 0x70f},     {0x890, 0x891},     {0x8e2, 0x8e2},     {0x180e, 0x180e},
        {0x200b, 0x200f},   {0x202a, 0x202e},   {0x2060, 0x2064},   {0x2066, 0x206f},
        {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
        {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
        {0xe0020, 0xe007f}};
    for (const auto& r : ranges)
        if (cp >= r[0] && cp <= r[1])
            return true;
    return false;
}

/// C1 controls and the format characters that can make text read other than it is.
bool hidden_control(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9f) || format_character(cp);
}

std::string hex_escape(const char* format, unsigned value) {
    char buf[16];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

std::string escaped(const std::string& s, bool keep_newlines) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char b = byte_at(s, i);
        const std::size_t len = utf8_length(s, i);
        if (b == '\n' && keep_newlines)
            out += '\n';
        else if (b == '\t' || b == '\n' || b == '\r')
            out += b == '\t' ? "\\t" : b == '\n' ? "\\n" : "\\r";
        else if (b < 0x20 || b == 0x7f || len == 0)
            out += hex_escape("\\x%02x", b);
        else if (len > 1 && hidden_control(code_point(s, i, len)))
            out += hex_escape(len == 4 ? "\\U%08x" : "\\u%04x", code_point(s, i, len));
        else
            out.append(s, i, len);
        i += len == 0 ? 1 : len;
    }
    return out;
}

} // namespace

std::string terminal_text(const std::string& s) {
    return escaped(s, false);
}

std::string terminal_lines(const std::string& s) {
    return escaped(s, true);
}

namespace {

/// Whether `s` is a plain number ("-1.5", "+2e-3", "-12%"): a spreadsheet reads it as that
/// number and runs nothing, and a CSV reader must still see it as one.
bool plain_number(const std::string& s) {
    std::size_t i = 0, digits = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
        ++i;
    for (; i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'); ++i)
        digits += s[i] != '.';
    if (digits == 0)
        return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        const std::size_t from = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
            ++i;
        if (i == from)
            return false;
    }
    if (i < s.size() && s[i] == '%')
        ++i;
    return i == s.size();
}

} // namespace

std::string csv_field(const std::string& s) {
    std::string text = terminal_text(s);
    // A cell a spreadsheet would read as a formula (= + - @, or a leading tab or CR, which
    // terminal_text has written as \t, \r) starts with a quote mark: shown as text. A lone
    // "-" (a figure not known) runs nothing and stays as it is.
    const bool formula = !text.empty() && std::string("=+-@").find(text[0]) != std::string::npos &&
                         text != "-" && !plain_number(text);
    if (formula || (!s.empty() && (s[0] == '\t' || s[0] == '\r')))
        text.insert(0, "'");
    if (text.find_first_of(",\"") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char ch : text)
        out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
}

std::string gnuplot_string(const std::string& s) {
    const std::string text = terminal_text(s);
    // gnuplot 5.4 reads a literal that opens with '' as the empty string and then more tokens
    // (a syntax error that fails the whole plot): leading quotes are joined on as "'".
    std::size_t lead = 0;
    std::string out;
    for (; lead < text.size() && text[lead] == '\''; ++lead)
        out += "\"'\".";
    out += "'";
    for (std::size_t i = lead; i < text.size(); ++i)
        out += text[i] == '\'' ? std::string("''") : std::string(1, text[i]);
    return out + "'";
}

std::string markdown_text(const std::string& s) {
    const std::string text = terminal_text(s);
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    std::size_t digits = 0; // a leading digit run: "1." or "1)" would start an ordered list
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        const bool lead = i == 0 && (ch == '+' || ch == '-' || ch == '=' || ch == '#');
        const bool list_mark = i > 0 && digits == i && (ch == '.' || ch == ')');
        const bool special = ch != '\0' && std::strchr("\\`[]<>|&", ch) != nullptr;
        if (special || lead || list_mark)
            out += '\\';
        out += ch;
        if (digits == i && ch >= '0' && ch <= '9')
            ++digits;
    }
    return out;
}

std::string cut_long_value(const std::string& s, std::size_t max) {
    if (s.size() <= max)
        return s;
    std::uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a, 64 bits
    for (const char ch : s) {
        h ^= static_cast<unsigned char>(ch);
        h *= 0x100000001b3ULL;
    }
    char mark[80];
    std::snprintf(mark, sizeof mark, "...[cut: %zu bytes, hash %012llx]", s.size(),
                  static_cast<unsigned long long>(h & 0xffffffffffffULL));
    std::size_t keep = max > std::strlen(mark) ? max - std::strlen(mark) : 0;
    while (keep > 0 && (byte_at(s, keep) & 0xc0u) == 0x80u) // not inside a character
        --keep;
    return s.substr(0, keep) + mark;
}

std::string valid_utf8(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_length(s, i);
        if (len == 0)
            out += "\xef\xbf\xbd"; // U+FFFD REPLACEMENT CHARACTER
        else
            out.append(s, i, len);
        i += len == 0 ? 1 : len;
    }
    return out;
}

} // namespace ringscale
