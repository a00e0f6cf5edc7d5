#include "html_svg.hpp"

#include "html_escape.hpp"
#include "plots.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

namespace ringscale::analysis {

namespace {

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

/// draw_panels' hover file ("KEY LENGTH\nTEXT\n" per point) as hover texts; a malformed
/// entry ends the reading (its points keep an empty title).
hover_texts read_hover(const std::string& s) {
    hover_texts out;
    for (std::size_t at = 0; at < s.size();) {
        const auto space = s.find(' ', at), eol = s.find('\n', at);
        if (space == std::string::npos || eol == std::string::npos || space > eol)
            break;
        const std::string len = s.substr(space + 1, eol - space - 1);
        if (len.empty() || len.size() > 9 ||
            len.find_first_not_of("0123456789") != std::string::npos)
            break;
        const std::size_t n = std::stoul(len);
        if (n > s.size() - eol - 1)
            break;
        out[s.substr(at, space - at)] = s.substr(eol + 1, n);
        at = eol + 2 + n;
    }
    return out;
}

/// `s` without each `<tag ...>...</tag>` element.
std::string without_elements(std::string s, const std::string& tag) {
    for (auto at = s.find("<" + tag); at != std::string::npos; at = s.find("<" + tag, at)) {
        const auto end = s.find("</" + tag + ">", at);
        s.erase(at, end == std::string::npos ? std::string::npos : end + tag.size() + 3 - at);
    }
    return s;
}

/// `s` without an attribute whose name starts with "on" inside any tag.
std::string without_handlers(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    bool in_tag = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        if (ch == '<')
            in_tag = true;
        else if (ch == '>')
            in_tag = false;
        const bool space = ch == ' ' || ch == '\t' || ch == '\n';
        if (in_tag && space && i + 3 < s.size() && (s[i + 1] == 'o' || s[i + 1] == 'O') &&
            (s[i + 2] == 'n' || s[i + 2] == 'N')) {
            const auto eq = s.find('=', i);
            const auto gt = s.find('>', i);
            if (eq != std::string::npos && eq < gt && eq + 1 < s.size() &&
                (s[eq + 1] == '"' || s[eq + 1] == '\'')) {
                const auto close = s.find(s[eq + 1], eq + 2);
                if (close != std::string::npos) {
                    i = close;
                    continue;
                }
            }
        }
        out += ch;
    }
    return out;
}

/// Hover text as escaped lines (a tooltip shows the line breaks).
std::string hover_html(const std::string& text) {
    std::string out;
    for (std::size_t at = 0; at <= text.size();) {
        const auto end = std::min(text.find('\n', at), text.size());
        out += (at ? "\n" : "") + html_text(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

/// gnuplot's frequent group styles as classes (the page's CSS holds them: a tenth of a chart's
/// bytes), the groups left empty removed, and the launch points' grey left to the CSS.
std::string with_short_groups(std::string s) {
    static const char* const styles[][2] = {
        {"black\" stroke=\"currentColor\" stroke-width=\"1.00", "w"},
        {"black\" stroke=\"black\" stroke-width=\"0.50", "w2"},
        {"gray\" stroke=\"currentColor\" stroke-width=\"0.50", "w3"},
        {"gray\" stroke=\"gray\" stroke-width=\"1.00", "w4"},
        {"black\" stroke=\"currentColor\" stroke-width=\"2.00", "w5"}};
    for (const auto& style : styles) {
        const std::string wrap = std::string("<g fill=\"none\" color=\"") + style[0] +
                                 "\" stroke-linecap=\"butt\" stroke-linejoin=\"miter\">";
        const std::string short_wrap = std::string("<g class=\"") + style[1] + "\">";
        for (auto at = s.find(wrap); at != std::string::npos; at = s.find(wrap, at))
            s.replace(at, wrap.size(), short_wrap);
        const std::string empty = short_wrap + "\n</g>\n";
        for (auto at = s.find(empty); at != std::string::npos; at = s.find(empty, at))
            s.erase(at, empty.size());
    }
    // A hover point's own group styled by the CSS (g.hv), without gnuplot's wrapper around it.
    const std::string wrapped = "<g class=\"w\">\n\t<g class=\"hv\">";
    for (auto at = s.find(wrapped); at != std::string::npos; at = s.find(wrapped, at)) {
        const auto close = s.find("</g>\n</g>\n", at);
        if (close == std::string::npos)
            break;
        s.erase(close + 4, 5);
        s.erase(at, wrapped.size() - 14);
    }
    const std::string grey = " color='rgb( 64,  64,  64)'/>";
    for (auto at = s.find(grey); at != std::string::npos; at = s.find(grey, at))
        s.replace(at, grey.size(), "/>");
    return s;
}

/// Each hypertext group (`<g onmousemove="gnuplot_svg.showHypertext(evt,'KEY')" ...><title>
/// </title>`) as `<g class="hv"><title>TEXT</title>`.
std::string with_hover(std::string s, const hover_texts& hover) {
    const std::string head = "<g onmousemove=\"gnuplot_svg.showHypertext(evt,'";
    for (auto at = s.find(head); at != std::string::npos; at = s.find(head, at)) {
        const auto key_end = s.find('\'', at + head.size());
        const auto title_end = s.find("</title>", at);
        if (key_end == std::string::npos || title_end == std::string::npos)
            break;
        const auto it = hover.find(s.substr(at + head.size(), key_end - at - head.size()));
        const std::string g = "<g class=\"hv\"><title>" +
                              (it == hover.end() ? std::string() : hover_html(it->second)) +
                              "</title>";
        s.replace(at, title_end + 8 - at, g);
        at += g.size();
    }
    return s;
}

/// Every id="X" as id="PREFIX-X", and each reference #X (before a quote or ')') with it.
std::string with_prefixed_ids(std::string s, const std::string& prefix) {
    std::set<std::string> ids;
    for (auto at = s.find(" id=\""); at != std::string::npos; at = s.find(" id=\"", at + 1)) {
        const auto end = s.find('"', at + 5);
        if (end == std::string::npos)
            break;
        ids.insert(s.substr(at + 5, end - at - 5));
        s.insert(at + 5, prefix + "-");
    }
    std::string out;
    out.reserve(s.size() + 64);
    for (std::size_t i = 0; i < s.size(); ++i) {
        out += s[i];
        if (s[i] != '#')
            continue;
        const auto end = s.find_first_of("'\")", i + 1);
        if (end != std::string::npos && ids.count(s.substr(i + 1, end - i - 1)))
            out += prefix + "-";
    }
    return out;
}

/// Each plot group titled "marked..." gets class="marked" (the page's toggle hides them), and
/// so do the untitled groups right after one (the marked points' bars).
std::string with_marked_class(std::string s) {
    const std::string head = "<g id=\"gnuplot_plot_";
    bool after_marked = false;
    for (auto at = s.find(head); at != std::string::npos; at = s.find(head, at + 1)) {
        const auto title = s.find("<title>", at);
        const auto tag_end = s.find('>', at);
        if (title == std::string::npos || title >= tag_end + 8)
            continue; // a key entry, not a plot
        const bool marked = s.compare(title + 7, 6, "marked") == 0;
        const bool untitled = s.compare(title + 7, 13, "gnuplot_plot_") == 0;
        after_marked = marked || (after_marked && untitled);
        if (after_marked)
            s.insert(at + 2, " class=\"marked\"");
    }
    return s;
}

/// `s` without the <defs> entries nothing refers to (gnuplot defines every point shape and two
/// filters in each SVG; a chart uses one or two): a def is kept while "#ID" appears elsewhere.
std::string without_unused_defs(std::string s) {
    const auto begin = s.find("<defs>"), end = s.find("</defs>");
    if (begin == std::string::npos || end == std::string::npos || end < begin)
        return s;
    std::vector<std::string> items; // each def, a <filter> with its children
    for (std::size_t at = begin + 6; at < end;) {
        auto stop = std::min(s.find('\n', at), end);
        const auto first = s.find_first_not_of("\t\n ", at);
        const auto filter_end = s.find("</filter>", at);
        if (first < end && s.compare(first, 7, "<filter") == 0 && filter_end < end)
            stop = filter_end + 9;
        items.push_back(s.substr(at, stop - at));
        at = stop + (stop < end && s[stop] == '\n' ? 1 : 0);
    }
    std::string rest = s.substr(0, begin) + s.substr(end);
    for (bool removed = true; removed;) {
        removed = false;
        for (std::string& item : items) {
            auto id = item.find(" id='");
            id = id == std::string::npos ? item.find(" id=\"") : id;
            if (id == std::string::npos)
                continue;
            const auto id_end = item.find(item[id + 4], id + 5);
            if (id_end == std::string::npos)
                continue;
            const std::string ref = "#" + item.substr(id + 5, id_end - id - 5);
            bool used = false;
            auto refers = [&](const std::string& t) {
                for (auto at = t.find(ref); at != std::string::npos && !used;
                     at = t.find(ref, at + 1))
                    used = at + ref.size() < t.size() && std::strchr("'\")", t[at + ref.size()]);
            };
            refers(rest);
            for (const std::string& other : items)
                if (&other != &item)
                    refers(other);
            if (!used) {
                item.clear();
                removed = true;
            }
        }
    }
    std::string defs = "<defs>\n";
    for (const std::string& item : items)
        if (item.find_first_not_of("\t\n ") != std::string::npos)
            defs += item + "\n";
    return s.substr(0, begin) + defs + s.substr(end);
}

/// Inside tags, each number with two decimals (gnuplot's coordinates) to one, or none where it
/// is whole: a tenth of a pixel is below what a screen shows.
std::string with_short_numbers(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    bool in_tag = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        in_tag = ch == '<' ? true : ch == '>' ? false : in_tag;
        const bool start = in_tag && std::isdigit(static_cast<unsigned char>(ch)) &&
                           (i == 0 || (!std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                                       s[i - 1] != '.')); // "M60.50" too
        std::size_t dot = i;
        while (start && dot < s.size() && std::isdigit(static_cast<unsigned char>(s[dot])))
            ++dot;
        if (!start || dot - i > 7 || dot + 3 > s.size() || s[dot] != '.' ||
            !std::isdigit(static_cast<unsigned char>(s[dot + 1])) ||
            !std::isdigit(static_cast<unsigned char>(s[dot + 2])) ||
            (dot + 3 < s.size() && std::isalnum(static_cast<unsigned char>(s[dot + 3])))) {
            out += ch;
            continue;
        }
        const long v = (std::stol(s.substr(i, dot - i)) * 100 + (s[dot + 1] - '0') * 10 +
                        (s[dot + 2] - '0') + 5) /
                       10;
        out += v % 10 == 0 ? fmt::format("{}", v / 10) : fmt::format("{}.{}", v / 10, v % 10);
        i = dot + 2;
    }
    return out;
}

/// Bytes no browser needs: the indentation, gnuplot's title and description of the whole SVG,
/// style groups left empty, a text's lone <tspan> repeating its group's font, and the SVG 1.1
/// "xlink:" of href (SVG 2, every current browser).
std::string compact(std::string s) {
    const auto replace_all = [&s](const std::string& from, const std::string& to) {
        for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
            s.replace(at, from.size(), to);
    };
    replace_all("\n\t\t", "\n");
    replace_all("\n\t", "\n");
    replace_all("<title>Gnuplot</title>\n", "");
    const auto desc = s.find("<desc>Produced by GNUPLOT");
    if (desc != std::string::npos && s.find("</desc>\n", desc) != std::string::npos)
        s.erase(desc, s.find("</desc>\n", desc) + 8 - desc);
    for (auto at = s.find(">\n</g>\n"); at != std::string::npos; at = s.find(">\n</g>\n", at)) {
        const auto tag = s.rfind('<', at);
        if (s.compare(tag, 15, "<g fill=\"none\" ") == 0 && s.find(" id=", tag) > at) {
            s.erase(tag, at + 7 - tag);
            at = tag;
        } else {
            at += 7;
        }
    }
    const std::string lone = "<text><tspan font-family=\"Sans\" >";
    for (auto at = s.find(lone); at != std::string::npos; at = s.find(lone, at)) {
        const auto close = s.find("</tspan></text>", at);
        if (close == std::string::npos || s.find('<', at + lone.size()) != close) {
            at += lone.size();
            continue;
        }
        s.replace(close, 15, "</text>");
        s.replace(at, lone.size(), "<text>");
    }
    replace_all(" xlink:href=", " href=");
    replace_all("/>\t<", "/>\n<");
    replace_all("'  d='", "' d='");
    replace_all("  '/>", "'/>");
    replace_all("\"  text-anchor", "\" text-anchor");
    return s;
}

} // namespace

std::string svg_terminal(int width, int height) {
    return fmt::format("set terminal svg size {},{} font 'Sans,10' background '#ffffff'\n", width,
                       height);
}

std::string inline_svg(const std::string& svg, const std::string& prefix,
                       const hover_texts& hover) {
    const auto begin = svg.find("<svg");
    const auto end = svg.rfind("</svg>");
    if (begin == std::string::npos || end == std::string::npos || end < begin)
        return {};
    std::string s = svg.substr(begin, end + 6 - begin);
    s = without_elements(s, "script");
    s = with_hover(s, hover);
    s = without_handlers(s);
    s = with_marked_class(s);
    s = with_short_groups(s);
    s = compact(with_short_numbers(without_unused_defs(s)));
    return with_prefixed_ids(s, prefix);
}

std::map<std::string, std::string> report_svgs(const std::string& dir) {
    namespace fs = std::filesystem;
    std::map<std::string, std::string> out;
    std::error_code ec;
    std::vector<fs::path> scripts; // listed first: the loop writes beside them
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".gp")
            scripts.push_back(e.path());
    for (const fs::path& path : scripts) {
        std::istringstream in(read_text(path.string()));
        std::string gp, line;
        std::vector<std::string> stems;
        while (std::getline(in, line)) {
            if (line.rfind("set terminal ", 0) == 0) {
                const auto size = line.find(" size ");
                int w = 1000, h = 500;
                if (size != std::string::npos)
                    std::sscanf(line.c_str() + size, " size %d,%d", &w, &h);
                gp += svg_terminal(w, h);
                continue;
            }
            if (line.rfind("set output '", 0) == 0 && line.size() > 17 &&
                line.compare(line.size() - 5, 5, ".png'") == 0) {
                stems.push_back(line.substr(12, line.size() - 17));
                line = "set output '" + stems.back() + ".svg'";
            }
            if (line.rfind("#svg ", 0) == 0) { // the SVG's own form of the line before
                gp.erase(gp.rfind('\n', gp.size() - 2) + 1);
                line.erase(0, 5);
            }
            gp += line + "\n";
        }
        const std::string script = path.stem().string() + ".svg.gp";
        write_plot_file(dir + "/" + script, gp);
        try {
            run_gnuplot(dir, script);
        } catch (const error&) { // the page names the plot as missing; report.md has it
        }
        for (const std::string& stem : stems) {
            const std::string svg = dir + "/" + stem + ".svg";
            const std::string hover = dir + "/" + stem + ".hover";
            out[stem] =
                inline_svg(read_text(svg), "p-" + html_slug(stem), read_hover(read_text(hover)));
            fs::remove(svg, ec);
            fs::remove(hover, ec);
        }
        fs::remove(dir + "/" + script, ec);
        fs::remove(dir + "/" + script + ".log", ec);
    }
    return out;
}

} // namespace ringscale::analysis
