#include "plot_panels.hpp"

#include "plots.hpp"

#include "analysis/cases/cases.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace ringscale::analysis {

namespace {

constexpr int panel_width = 700;
constexpr int panel_height = 440;
constexpr double chars_per_px = 1.0 / 7.5; // Sans 10 at the terminal's resolution

// Distinct colours (Okabe-Ito, then Tableau): a series keeps its colour in every panel.
const char* const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                               "#56B4E9", "#000000", "#F0E442", "#8C564B", "#7F7F7F",
                               "#BCBD22", "#17BECF", "#9467BD", "#FF9896"};
constexpr int palette_size = sizeof(palette) / sizeof(palette[0]);

struct range {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    void add(double v) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    bool empty() const { return !(lo <= hi); }
};

std::string size_label(double v) {
    const auto n = static_cast<long long>(std::llround(v));
    if (n >= (1 << 20) && n % (1 << 20) == 0)
        return fmt::format("{}M", n >> 20);
    if (n >= 1024 && n % 1024 == 0)
        return fmt::format("{}K", n >> 10);
    return fmt::format("{}", n);
}

double or_point(double bound, double point) {
    return std::isfinite(bound) ? bound : point;
}

/// "set xrange/yrange/logscale" for one panel: every point and bar inside the frame.
std::string axes(const plot_panel& p) {
    range x, y;
    for (const panel_series& s : p.series)
        for (const panel_point& pt : s.points) {
            x.add(pt.x);
            y.add(pt.y);
            y.add(pt.lo);
            y.add(pt.hi);
        }
    std::string gp;
    if (p.x_log2 && x.lo > 0) {
        gp +=
            fmt::format("set logscale x 2\nset xrange [{:.6g}:{:.6g}]\n", x.lo / 1.35, x.hi * 1.35);
    } else {
        const double pad = x.hi > x.lo ? 0.06 * (x.hi - x.lo) : std::max(1.0, std::abs(x.lo));
        gp += fmt::format("unset logscale x\nset xrange [{:.6g}:{:.6g}]\n", x.lo - pad, x.hi + pad);
    }
    // Tics at the measured x values (P or S), labelled as the study names them (1K, 2M).
    std::vector<double> xs;
    for (const panel_series& s : p.series)
        for (const panel_point& pt : s.points)
            if (std::find(xs.begin(), xs.end(), pt.x) == xs.end())
                xs.push_back(pt.x);
    std::sort(xs.begin(), xs.end());
    if (p.x_log2 && xs.size() <= 16) {
        std::string tics;
        for (double v : xs)
            tics +=
                fmt::format("{}{} {:.9g}", tics.empty() ? "" : ", ",
                            gnuplot_string(p.x_sizes ? size_label(v) : fmt::format("{:g}", v)), v);
        gp += "set xtics (" + tics + ")\n";
    } else {
        gp += "set xtics autofreq\n";
        gp += p.x_sizes ? "set format x '%.0b%B'\n" : "set format x '%g'\n";
    }
    if (!p.y_from_zero && y.lo > 0 && y.hi / y.lo > 10) { // values span decades
        const double f = std::max(1.12, std::pow(y.hi / y.lo, 0.06));
        gp += fmt::format("set logscale y\nset yrange [{:.6g}:{:.6g}]\nset format y '%g'\n",
                          y.lo / f, y.hi * f);
        // 1-2-5 tics when the range spans few decades (gnuplot labels only powers of ten).
        if (y.hi / y.lo < 1e3) {
            std::string tics;
            for (double d = std::pow(10.0, std::floor(std::log10(y.lo / f))); d < y.hi * f * 10;
                 d *= 10)
                for (double m : {1.0, 2.0, 5.0})
                    if (m * d >= y.lo / f && m * d <= y.hi * f)
                        tics += fmt::format("{}{:g}", tics.empty() ? "" : ", ", m * d);
            gp += "set ytics (" + tics + ")\n";
        } else {
            gp += "set ytics autofreq\n";
        }
    } else {
        const double lo = p.y_from_zero ? std::min(0.0, y.lo) : y.lo;
        const double span = y.hi > lo ? y.hi - lo : std::max(std::abs(y.hi), 1e-9);
        const double bottom = lo - 0.08 * span;
        gp += fmt::format("unset logscale y\nset ytics autofreq\nset yrange [{:.6g}:{:.6g}]\n"
                          "set format y '%g'\n",
                          p.y_from_zero || (y.lo >= 0 && bottom < 0) ? std::min(0.0, lo) : bottom,
                          y.hi + 0.1 * span);
    }
    return gp;
}

/// The legend entry and style of marked points (the page's toggle hides the groups whose title
/// starts with "marked").
const char* const marked_style =
    "pt 6 ps 1.8 lw 2 lc rgb '#d07000' t 'marked: measured on a busy machine (hollow; never "
    "decides a verdict)'";

/// The marked points' bars in the SVG: no second legend entry.
const char* const marked_bars = "pt 6 ps 1.8 lw 2 lc rgb '#d07000' notitle";

/// The panel's y label, its "95% CI" claim dropped where no point has a finite interval
/// (too few iterations or launches for one): the axis says only what the figure draws.
std::string y_label(const plot_panel& p) {
    for (const panel_series& s : p.series)
        for (const panel_point& pt : s.points)
            if (std::isfinite(pt.lo) && std::isfinite(pt.hi) && pt.hi > pt.lo)
                return p.ylabel;
    const std::string claim = ", 95% CI";
    const std::size_t at = p.ylabel.rfind(claim);
    if (at == std::string::npos || at + claim.size() != p.ylabel.size())
        return p.ylabel;
    return p.ylabel.substr(0, at) + " (no 95% CI: too few samples)";
}

std::string x_text(const plot_panel& p, double x) {
    return p.x_sizes ? size_label(x) : fmt::format("{:g}", x);
}

/// The data rows of series `s` (x y lo hi key clean-y) with each point's hover text appended
/// to `hover` ("key length\ntext\n", keys counted by `keys`) and its marked points' rows to
/// `marked`.
std::string series_rows(const plot_panel& p, const panel_series& s, double dodge, int& keys,
                        std::string& hover, std::string& marked) {
    std::string rows;
    for (const panel_point& pt : s.points) {
        const std::string key = fmt::format("k{}", keys++);
        std::string text = s.name + "\n" + p.xlabel + ": " + x_text(p, pt.x) + "\n" + p.ylabel +
                           ": " + fmt::format("{:.4g}", pt.y);
        if (std::isfinite(pt.lo) && std::isfinite(pt.hi))
            text += fmt::format(" [{:.4g}, {:.4g}]", pt.lo, pt.hi);
        if (!pt.about.empty())
            text += "\n" + pt.about;
        if (!pt.mark.empty())
            text += "\nmarked: " + pt.mark;
        hover += fmt::format("{} {}\n", key, text.size()) + text + "\n";
        const std::string row = fmt::format("{:.9g} {:.9g} {:.9g} {:.9g} {}", pt.x * dodge, pt.y,
                                            or_point(pt.lo, pt.y), or_point(pt.hi, pt.y), key);
        rows += row + (pt.mark.empty() ? fmt::format(" {:.9g}\n", pt.y) : " nan\n");
        if (!pt.mark.empty())
            marked += row + "\n";
    }
    return rows;
}

/// The plot command of panel `p` for the PNG, then its "#svg " form (points with hypertext
/// keys), its data blocks (numbered from `block`) appended to `data` and its points' hover
/// texts to `hover`.
std::string panel_plot(const plot_panel& p, const std::string& stem,
                       const std::map<std::string, int>& colour, int& block, int& keys,
                       std::string& data, std::string& hover) {
    std::string plot, svg_plot, marked_rows;
    // Series side by side at one x (a few percent apart on the log axis): every CI bar
    // stays visible instead of hiding behind the next series' bar.
    const double n_series = static_cast<double>(p.series.size());
    int index = 0;
    for (const panel_series& s : p.series) {
        if (s.points.empty())
            continue;
        const double dodge = p.x_log2 ? std::pow(2.0, 0.05 * (index++ - (n_series - 1) / 2)) : 1.0;
        const bool any_marked = std::any_of(s.points.begin(), s.points.end(),
                                            [](const panel_point& pt) { return !pt.mark.empty(); });
        const std::string rows = series_rows(p, s, dodge, keys, hover, marked_rows);
        data += "# " + terminal_text(s.name) + "\n" + rows + "\n\n";
        const int c = colour.at(s.name);
        const std::string style =
            fmt::format("pt {} ps 1.1 lc rgb '{}'", 5 + c % 4 * 2, palette[c % palette_size]);
        const std::string at = fmt::format("{} index {}", gnuplot_string(stem + ".dat"), block++);
        // A series with marked points: its line through them all, named in the legend (even
        // when every point is marked), its clean points with their bars, the marked ones drawn
        // apart (below).
        const std::string own =
            !any_marked ? at + fmt::format(" u 1:2:3:4 w yerrorlines lw 2 {} t {}", style,
                                           gnuplot_string(s.name))
                        : at + fmt::format(" u 1:2 w linespoints lw 2 {1} t {2}, {0} u 1:6:3:4 w "
                                           "yerrorbars lw 2 {1} notitle",
                                           at, style, gnuplot_string(s.name));
        const std::string sep = plot.empty() ? "" : ", ";
        plot += sep + own;
        svg_plot +=
            sep + own + ", " + at + " u 1:6:5 w labels hypertext point " + style + " notitle";
    }
    if (!marked_rows.empty()) {
        data += "# marked\n" + marked_rows + "\n\n";
        const std::string at =
            fmt::format(", {} index {} ", gnuplot_string(stem + ".dat"), block++);
        plot += at + "u 1:2:3:4 w yerrorbars " + marked_style;
        // The SVG draws the marked points' bars too: an untitled plot right after the marked
        // points, which the page's toggle hides with them (with_marked_class).
        svg_plot += at + "u 1:2:5 w labels hypertext point " + marked_style + at +
                    "u 1:2:3:4 w yerrorbars " + marked_bars;
    }
    return "plot " + plot + "\n#svg plot " + svg_plot + "\n";
}

} // namespace

panel_point about_case(panel_point pt, const pooled_case& c) {
    pt.about =
        fmt::format("case: {}\nP: {}\nlaunches: {}", c.label(), c.world_size, c.launches.size());
    if (!c.not_ok.empty())
        pt.about += fmt::format(" (+{} not ok)", c.not_ok.size());
    pt.mark = marks_text(c, true);
    return pt;
}

std::string wrap_text(const std::string& text, std::size_t width) {
    std::string out, line;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string word = text.substr(start, end - start);
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        start = end + 1;
    }
    return out + line;
}

std::string gnuplot_wrapped(const std::string& text, std::size_t width) {
    const std::string w = wrap_text(text, width);
    std::string out;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = w.find('\n', start);
        out += (out.empty() ? "" : ".\"\\n\".") + gnuplot_string(w.substr(start, end - start));
        if (end == std::string::npos)
            return out;
        start = end + 1;
    }
}

bool draw_panels(const std::vector<plot_panel>& given, const std::string& title,
                 const std::string& dir, const std::string& stem, int columns) {
    // Series in name order in every panel: the same legend order and colour everywhere.
    std::vector<plot_panel> all = given;
    for (plot_panel& p : all)
        std::stable_sort(
            p.series.begin(), p.series.end(),
            [](const panel_series& a, const panel_series& b) { return a.name < b.name; });
    std::vector<const plot_panel*> panels;
    std::map<std::string, int> colour; // series name -> palette index, in order of appearance
    for (const plot_panel& p : all) {
        bool any = false;
        for (const panel_series& s : p.series)
            any = any || !s.points.empty();
        if (!any)
            continue;
        panels.push_back(&p);
        for (const panel_series& s : p.series)
            colour.emplace(s.name, static_cast<int>(colour.size()));
    }
    if (panels.empty())
        return false;
    const int n = static_cast<int>(panels.size());
    const int cols = std::max(1, std::min(columns, n));
    const int rows = (n + cols - 1) / cols;
    const int width = std::max(panel_width * cols, 900); // room for the title
    const std::size_t title_chars = static_cast<std::size_t>(width * chars_per_px * 0.7);
    const std::string title_text = wrap_text(title, title_chars);
    const int title_lines =
        static_cast<int>(std::count(title_text.begin(), title_text.end(), '\n')) + 1;
    std::string data, hover;
    std::string gp =
        fmt::format("set terminal {} size {},{} font 'Sans,10'\nset output {}\n", png_terminal(),
                    width, panel_height * rows + 22 * title_lines, gnuplot_string(stem + ".png"));
    gp += "set termoption noenhanced\nset datafile missing 'nan'\nset grid\nset bars small\n";
    gp += fmt::format("set multiplot layout {},{} title {} font ',12'\n", rows, cols,
                      gnuplot_wrapped(title, title_chars));
    const std::size_t panel_chars = static_cast<std::size_t>(panel_width * chars_per_px * 0.9);
    int block = 0, keys = 0;
    for (const plot_panel* p : panels) {
        gp += "unset arrow\nunset label\n" + axes(*p);
        gp += p->legend_below
                  ? "set key outside below center vertical maxcols 1 Left reverse font ',9' "
                    "noenhanced\n"
                  : "set key outside right top vertical Left reverse font ',9' noenhanced\n";
        gp += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\n",
                          gnuplot_wrapped(p->title, panel_chars), gnuplot_string(p->xlabel),
                          gnuplot_string(y_label(*p)));
        for (const panel_marker& mk : p->markers) {
            gp += fmt::format("set arrow from {0:.6g}, graph 0 to {0:.6g}, graph 1 nohead dt 2 "
                              "lw 1.5 lc rgb '#555555'\n",
                              mk.x);
            gp += fmt::format("set label {} at {:.6g}, graph {:.2f} rotate by 90 right offset "
                              "-0.6,0 font ',8' tc rgb '#333333' front\n",
                              gnuplot_wrapped(mk.text, 60), mk.x, 0.97);
        }
        gp += panel_plot(*p, stem, colour, block, keys, data, hover);
    }
    gp += "unset multiplot\n";
    write_plot_file(dir + "/" + stem + ".dat", data);
    write_plot_file(dir + "/" + stem + ".hover", hover);
    write_plot_file(dir + "/" + stem + ".gp", gp);
    run_gnuplot(dir, stem + ".gp");
    return true;
}

} // namespace ringscale::analysis
