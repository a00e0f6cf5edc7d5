// The style sheet and the one script of report.html, inlined in the page. The script
// sorts tables, filters rows and series by identity and by "changed only", and shows or hides
// marked launches; it reads the page's escaped attributes, never text a results file wrote
// into a script.
#pragma once

namespace ringscale::analysis {

/// The page's CSS: readable at every width (tables scroll in their own box, long labels wrap),
/// marked points hollow and orange, and print in the page's order with every series open.
extern const char* const html_page_css;

/// The page's JavaScript (no network access, no eval, no innerHTML of page text).
extern const char* const html_page_js;

} // namespace ringscale::analysis
