// Exact escaping of untrusted text for each sink (src/base/text_escape.hpp): terminal, CSV,
// gnuplot and JSON's UTF-8.
#include "src/base/text_escape.hpp"

#include <cstdint>
#include <cstdio>
#include <gtest/gtest.h>

using namespace ringscale;

TEST(text_escape, terminal_keeps_printable_text_and_utf8) {
    EXPECT_EQ(terminal_text("allreduce 1K a\\b 'q' \"d\""), "allreduce 1K a\\b 'q' \"d\"");
    EXPECT_EQ(terminal_text("bé € \xf0\x9f\x98\x80"), "bé € \xf0\x9f\x98\x80");
    EXPECT_EQ(terminal_text(""), "");
}

TEST(text_escape, terminal_escapes_every_control) {
    EXPECT_EQ(terminal_text("a\nb\rc\td"), "a\\nb\\rc\\td");
    EXPECT_EQ(terminal_text("\x1b[2J\x1b]0;t\x07"), "\\x1b[2J\\x1b]0;t\\x07");
    EXPECT_EQ(terminal_text(std::string("n\0l\x7f", 4)), "n\\x00l\\x7f");
    EXPECT_EQ(terminal_text("\xc2\x9b"
                            "31m"),
              "\\u009b31m"); // C1 CSI
    EXPECT_EQ(terminal_text("a\xe2\x80\xae"
                            "b"),
              "a\\u202eb"); // right-to-left override
}

namespace {

std::string utf8(std::uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xc0 | cp >> 6);
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        s += static_cast<char>(0xe0 | cp >> 12);
        s += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        s += static_cast<char>(0xf0 | cp >> 18);
        s += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
        s += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return s;
}

} // namespace

TEST(text_escape, terminal_escapes_every_format_character) {
    // Unicode 15.1's category Cf, enumerated code point by code point (the hostile tests check
    // the same against Python's unicodedata on every page).
    const std::uint32_t cf[][2] = {{0xad, 0xad},       {0x600, 0x605},     {0x61c, 0x61c},
                                   {0x6dd, 0x6dd},     {0x70f, 0x70f},     {0x890, 0x891},
                                   {0x8e2, 0x8e2},     {0x180e, 0x180e},   {0x200b, 0x200f},
                                   {0x202a, 0x202e},   {0x2060, 0x2064},   {0x2066, 0x206f},
                                   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
                                   {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3},
                                   {0x1d173, 0x1d17a}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f}};
    int n = 0;
    for (const auto& r : cf)
        for (std::uint32_t cp = r[0]; cp <= r[1]; ++cp, ++n) {
            const std::string out = terminal_text("a" + utf8(cp) + "b");
            char want[16];
            std::snprintf(want, sizeof want, cp > 0xffff ? "a\\U%08xb" : "a\\u%04xb", cp);
            EXPECT_EQ(out, want) << std::hex << cp;
        }
    EXPECT_EQ(n, 170);
    EXPECT_EQ(terminal_text("a\xe2\x80\x8b"
                            "bc"),
              "a\\u200bbc"); // zero-width space
    // Their neighbours stay text.
    EXPECT_EQ(terminal_text(utf8(0x200a) + utf8(0x2010) + utf8(0xfefe) + utf8(0xe0080)),
              utf8(0x200a) + utf8(0x2010) + utf8(0xfefe) + utf8(0xe0080));
}

TEST(text_escape, terminal_escapes_bytes_that_are_not_utf8) {
    EXPECT_EQ(terminal_text("cpu\xff\xfe"), "cpu\\xff\\xfe");
    EXPECT_EQ(terminal_text("\xc3"), "\\xc3");                            // truncated sequence
    EXPECT_EQ(terminal_text("\xc0\xaf"), "\\xc0\\xaf");                   // overlong '/'
    EXPECT_EQ(terminal_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
    EXPECT_EQ(terminal_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // above U+10FFFF
}

TEST(text_escape, terminal_lines_keeps_only_newlines) {
    EXPECT_EQ(terminal_lines("# title\n\x1b[31mred\r\n"), "# title\n\\x1b[31mred\\r\n");
}

TEST(text_escape, csv_fields_stay_one_line) {
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "two\\nlines");
    EXPECT_EQ(csv_field("x\r\n,y"), "\"x\\r\\n,y\"");
    EXPECT_EQ(csv_field("\x1b[2J"), "\\x1b[2J");
}

TEST(text_escape, csv_formulas_are_neutralised) {
    EXPECT_EQ(csv_field("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
    EXPECT_EQ(csv_field("=1+2,x"), "\"'=1+2,x\"");
    EXPECT_EQ(csv_field("+A1"), "'+A1");
    EXPECT_EQ(csv_field("-2+3"), "'-2+3");
    EXPECT_EQ(csv_field("@SUM(A1)"), "'@SUM(A1)");
    EXPECT_EQ(csv_field("\t=1"), "'\\t=1");
    EXPECT_EQ(csv_field("\r=1"), "'\\r=1");
    // Numbers stay numbers; text that only contains a sign is untouched.
    EXPECT_EQ(csv_field("-1.5"), "-1.5");
    EXPECT_EQ(csv_field("+2e-3"), "+2e-3");
    EXPECT_EQ(csv_field("-12.5%"), "-12.5%");
    EXPECT_EQ(csv_field("a=b"), "a=b");
    EXPECT_EQ(csv_field("-"), "-");
    EXPECT_EQ(csv_field("--x"), "'--x");
}

TEST(text_escape, gnuplot_strings_cannot_end_early) {
    EXPECT_EQ(gnuplot_string("P=2 'ring'"), "'P=2 ''ring'''");
    // The exploit: a newline ends a gnuplot string and the next line runs as a command.
    EXPECT_EQ(gnuplot_string("cpu\nsystem('touch x')\n#"), "'cpu\\nsystem(''touch x'')\\n#'");
    EXPECT_EQ(gnuplot_string("a\\\nb"), "'a\\\\nb'");  // no line continuation either
    EXPECT_EQ(gnuplot_string("`id` @m"), "'`id` @m'"); // literal inside single quotes
    // gnuplot 5.4 reads a literal opening with '' as '' and then more (a syntax error that
    // fails the plot): leading quotes are joined on as "'".
    EXPECT_EQ(gnuplot_string("'x'"), "\"'\".'x'''");
    EXPECT_EQ(gnuplot_string("''"), "\"'\".\"'\".''");
}

TEST(text_escape, valid_utf8_replaces_only_invalid_bytes) {
    EXPECT_EQ(valid_utf8("bé\x1b"), "bé\x1b");
    EXPECT_EQ(valid_utf8("cpu\xff"), "cpu\xef\xbf\xbd");
    EXPECT_EQ(valid_utf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
}

// Text from a results file in report.md never becomes a link, an image, HTML or a
// heading; what it said stays readable.
TEST(text_escape, markdown_text_disarms_links_images_and_html) {
    EXPECT_EQ(markdown_text("ring_attention (u2) S^(2) * p 0.5"),
              "ring_attention (u2) S^(2) * p 0.5");
    EXPECT_EQ(markdown_text("![x](http://evil/p.png)"), "!\\[x\\](http://evil/p.png)");
    EXPECT_EQ(markdown_text("[click](javascript:alert(1))"), "\\[click\\](javascript:alert(1))");
    EXPECT_EQ(markdown_text("<script>alert(1)</script>"), "\\<script\\>alert(1)\\</script\\>");
    EXPECT_EQ(markdown_text("<http://evil>"), "\\<http://evil\\>");
    EXPECT_EQ(markdown_text("a|b `c` &amp; x#y"), "a\\|b \\`c\\` \\&amp; x#y");
    EXPECT_EQ(markdown_text("# heading"), "\\# heading");
}

TEST(text_escape, markdown_text_escapes_what_would_start_a_block) {
    EXPECT_EQ(markdown_text("- item"), "\\- item");
    EXPECT_EQ(markdown_text("+ item"), "\\+ item");
    EXPECT_EQ(markdown_text("==="), "\\===");
    EXPECT_EQ(markdown_text("12. item"), "12\\. item");
    EXPECT_EQ(markdown_text("3) item"), "3\\) item");
    EXPECT_EQ(markdown_text("P=12. x-y"), "P=12. x-y"); // not at the start: nothing to escape
}

TEST(text_escape, markdown_text_is_one_line_of_terminal_text) {
    EXPECT_EQ(markdown_text("a\nb\x1b[2J"), "a\\\\nb\\\\x1b\\[2J");
}

TEST(text_escape, a_long_value_is_cut_with_its_size_and_hash) {
    const std::string short_value(long_value_bytes, 'x');
    EXPECT_EQ(cut_long_value(short_value), short_value);
    std::string a(1 << 20, 'x'), b = a;
    b.back() = 'y'; // differs only in its last byte
    const std::string ca = cut_long_value(a), cb = cut_long_value(b);
    EXPECT_LE(ca.size(), long_value_bytes);
    EXPECT_NE(ca, cb);
    EXPECT_EQ(ca.substr(0, 100), a.substr(0, 100));
    EXPECT_NE(ca.find("...[cut: 1048576 bytes, hash "), std::string::npos) << ca.substr(4000);
    EXPECT_EQ(cut_long_value(ca), ca); // once cut, stays
    // A cut never splits a character: 2-byte characters up to the end.
    std::string e;
    for (int i = 0; i < 3000; ++i)
        e += "\xc3\xa9";
    const std::string ce = cut_long_value(e);
    EXPECT_EQ(terminal_text(ce), ce); // valid UTF-8 throughout
}
