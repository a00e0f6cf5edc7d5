// Escaping for report.html: every string from a results file reaches the page through
// one of these, so no label, path or note can open a tag, end an attribute, close an inline SVG
// or become a script. The page puts no results-file text inside a <script>: data the page's
// script reads lives in escaped attributes (data-*), so the script context needs no escaper.
#pragma once

#include <string>

namespace ringscale::analysis {

/// Text for HTML or XML (SVG) element content and for a double- or single-quoted attribute:
/// terminal_text(s) (controls and invalid UTF-8 shown as \xNN) with & < > " ' as entities.
std::string html_text(const std::string& s);

/// A stable anchor id from `s`: "prefix-" and 12 hex digits of its FNV-1a hash. Only
/// [a-z0-9-] characters, so it is safe in an id, an href fragment and a CSS selector.
std::string html_anchor(const std::string& prefix, const std::string& s);

/// An anchor id from a heading's words: lower-case letters and digits, '-' between words
/// ("Per-rank heatmaps" -> "per-rank-heatmaps"); "section" when none is left.
std::string html_slug(const std::string& title);

/// True for a link target the page may point at: a file beside it or an anchor (letters,
/// digits, '_', '.', '-', '/', '#'; no scheme, no "..", no leading '/').
bool html_safe_href(const std::string& href);

} // namespace ringscale::analysis
