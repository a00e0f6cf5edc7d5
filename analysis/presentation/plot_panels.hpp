// One figure of one or more panels of lines with confidence bars, drawn by gnuplot with the
// habits every report plot shares: axes that hold every point and every bar (ranges computed
// from the data, never cut by the frame), a log axis where the values span more than a decade,
// titles wrapped rather than cut, one colour per series name across panels, the legend below
// each panel, and labelled vertical markers (a crossing with its schemes and CI).
#pragma once

#include <string>
#include <vector>

namespace ringscale::analysis {

/// One point; lo/hi NaN: no bar (the point alone).
struct panel_point {
    double x = 0, y = 0, lo = 0, hi = 0;
};

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

/// Draw `panels` (up to `columns` per row) under `title` into DIR/STEM.png, with STEM.dat and
/// STEM.gp beside it. Panels without points are left out; returns false (nothing drawn) when
/// none has any.
bool draw_panels(const std::vector<plot_panel>& panels, const std::string& title,
                 const std::string& dir, const std::string& stem, int columns = 2);

} // namespace ringscale::analysis
