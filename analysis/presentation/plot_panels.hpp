// One figure of one or more panels of lines with confidence bars, drawn by gnuplot with the
// habits every report plot shares: axes that hold every point and every bar (ranges computed
// from the data, never cut by the frame), a log axis where the values span more than a decade,
// titles wrapped rather than cut, one colour per series name across panels, the legend below
// each panel, and labelled vertical markers (a crossing with its schemes and CI).
#pragma once

#include <string>
#include <vector>

namespace ringscale::analysis {

struct pooled_case;

/// One point; lo/hi NaN: no bar (the point alone). report.html shows its hover text (the
/// series, x, y [lo, hi], then `about`) on the point; a point with a `mark` (why it was
/// measured on a busy machine) is drawn hollow orange, apart from its series, in both outputs.
struct panel_point {
    panel_point(double x_ = 0, double y_ = 0, double lo_ = 0, double hi_ = 0)
        : x(x_), y(y_), lo(lo_), hi(hi_) {}
    double x, y, lo, hi;
    std::string about; ///< more hover lines: the case, P, the launches
    std::string mark;  ///< empty: a clean point
};

/// `pt` about case `c`: its label, P and launches on hover, and its marks (marks_text).
panel_point about_case(panel_point pt, const pooled_case& c);

struct panel_series {
    std::string name;
    std::vector<panel_point> points; ///< ascending x
};

/// A labelled vertical line at x (e.g. a crossing).
struct panel_marker {
    double x = 0;
    std::string text;
};

struct plot_panel {
    std::string title;
    std::string xlabel, ylabel;
    bool x_log2 = true;       ///< P and S: powers of two
    bool x_sizes = false;     ///< x tick labels as sizes (1K, 2M)
    bool y_from_zero = false; ///< linear y axis starts at 0 (shares, efficiencies)
    /// The legend under the panel, one series a line, instead of at its right: every series
    /// named without the legend taking the width of a panel beside it (the accuracy plots).
    bool legend_below = false;
    std::vector<panel_series> series;
    std::vector<panel_marker> markers;
};

/// A panel with its titles and no series yet.
inline plot_panel make_panel(const std::string& title, const std::string& xlabel,
                             const std::string& ylabel) {
    plot_panel p;
    p.title = title;
    p.xlabel = xlabel;
    p.ylabel = ylabel;
    return p;
}

/// Lines broken into rows of at most `width` characters at spaces (never cut).
std::string wrap_text(const std::string& text, std::size_t width);

/// A gnuplot string expression of `text` wrapped at `width` ('a'."\n".'b'): a title that
/// does not fit the width takes more lines instead of being cut.
std::string gnuplot_wrapped(const std::string& text, std::size_t width);

/// Draw `panels` (up to `columns` per row) under `title` into DIR/STEM.png, with STEM.dat,
/// STEM.gp and STEM.hover (each point's hover text by the key in the data's 5th column, read
/// by report_svgs; the script's "#svg " lines are its plots for the SVG: points with hypertext)
/// beside it. Panels without points are left out; returns false (nothing drawn) when
/// none has any.
bool draw_panels(const std::vector<plot_panel>& panels, const std::string& title,
                 const std::string& dir, const std::string& stem, int columns = 2);

} // namespace ringscale::analysis
