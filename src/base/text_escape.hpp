// Escaping for every place a string read from a results file (or a file name) can end up:
// a terminal, a CSV field, a gnuplot script, Markdown and JSON. Results files travel between teams,
// so their text is untrusted: it must never move a terminal's cursor, end a gnuplot string (and run
// the commands after it) or make a JSON writer fail. Pure functions, no dependencies.
#pragma once

#include <string>

namespace ringscale {

/// `s` as one line of valid UTF-8 that a terminal shows as text: each control character
/// (C0, DEL, and the C1 controls U+0080..U+009F, which some terminals obey) and each byte
/// that is not part of valid UTF-8 becomes `\xNN` (C1 and every format character of Unicode
/// category Cf: zero-width spaces, bidirectional controls, tags: `\uNNNN`, `\UNNNNNNNN` past
/// U+FFFF); tab, newline and carriage return become `\t`,
/// `\n`, `\r`. Printable text, backslashes included, is kept.
std::string terminal_text(const std::string& s);

/// As terminal_text, but newlines are kept: for multi-line text such as report.md.
std::string terminal_lines(const std::string& s);

/// A CSV field (RFC 4180): terminal_text(s), quoted when it holds a comma or a quote (quotes
/// inside doubled). It never holds a line break, so one record stays one line. A cell that
/// begins with = + - @, a tab or a CR and is not a plain number ("-1.5", "+3%") gets a leading
/// ' (OWASP's CSV injection advice), so a spreadsheet shows it as text and runs no formula.
std::string csv_field(const std::string& s);

/// A gnuplot single-quoted string literal of terminal_text(s): quotes doubled. Inside single
/// quotes gnuplot expands neither backquotes nor macros, and with no line break the string
/// cannot end early, so nothing in `s` can become a gnuplot command. Leading quotes are joined
/// on as "'" (a string expression): gnuplot reads a literal opening with '' as '' and more.
std::string gnuplot_string(const std::string& s);

/// Text for Markdown (report.md) as inline text of one line: terminal_text(s) with a
/// backslash before every character that could open a link or an image ([ ]), an autolink, an
/// HTML tag or entity (< > &), a code span (`), a table cell (|) or an escape (\), and before
/// a leading # + - = or the . or ) after a leading digit run (a heading, a list item, an
/// underline). A Markdown viewer shows the text as it was; nothing in it is fetched or run.
/// Emphasis marks (* _ ~) stay: they change no more than the look.
std::string markdown_text(const std::string& s);

/// The most bytes a value read from a file (a /meta attribute, an identity, a label) is shown
/// with, in history's index and in every report and table alike.
inline constexpr std::size_t long_value_bytes = 4096;

/// `s` itself when it is at most `max` bytes; else its first bytes (cut where a UTF-8
/// character starts) and a mark with the whole value's size and a short hash of it,
/// "...[cut: 1048576 bytes, hash 0123456789ab]", all in at most `max` bytes. Two long values
/// that differ anywhere never read alike (the hash is 48 bits of FNV-1a over every byte).
std::string cut_long_value(const std::string& s, std::size_t max = long_value_bytes);

/// `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD, so a JSON writer
/// can always encode it; valid text (controls included: JSON escapes them) is kept.
std::string valid_utf8(const std::string& s);

} // namespace ringscale
