#include "html_escape.hpp"

#include "src/base/text_escape.hpp"

#include <cctype>
#include <cstdint>
#include <fmt/format.h>

namespace ringscale::analysis {

std::string html_text(const std::string& s) {
    const std::string t = terminal_text(s);
    std::string out;
    out.reserve(t.size() + t.size() / 8);
    for (const char ch : t)
        switch (ch) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += ch;
        }
    return out;
}

std::string html_anchor(const std::string& prefix, const std::string& s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char ch : s) {
        h ^= static_cast<unsigned char>(ch);
        h *= 0x100000001b3ULL;
    }
    return fmt::format("{}-{:012x}", prefix, h & 0xffffffffffffULL);
}

std::string html_slug(const std::string& title) {
    std::string out;
    bool gap = false;
    for (const char ch : title) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) && c < 128) {
            if (gap && !out.empty())
                out += '-';
            out += static_cast<char>(std::tolower(c));
            gap = false;
        } else {
            gap = true;
        }
    }
    return out.empty() ? "section" : out;
}

bool html_safe_href(const std::string& href) {
    if (href.empty() || href.front() == '/' || href.find("..") != std::string::npos)
        return false;
    for (const char ch : href) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (!(c < 128 &&
              (std::isalnum(c) || ch == '_' || ch == '.' || ch == '-' || ch == '/' || ch == '#')))
            return false;
    }
    return true;
}

} // namespace ringscale::analysis
