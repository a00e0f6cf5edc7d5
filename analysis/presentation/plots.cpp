#include "plots.hpp"

#include "analysis/measures/resources.hpp"
#include "plot_panels.hpp"
#include "src/base/error.hpp"
#include "src/base/whole_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

std::string header(const std::string& png, int width, int height) {
    return fmt::format("set terminal {} size {},{} font 'Sans,10'\nset output {}\n"
                       "set grid\nset key outside right top\n",
                       png_terminal(), width, height, gnuplot_string(png));
}

std::string shell_quoted(const std::string& s) {
    std::string out = "'";
    for (char ch : s)
        out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string path_in(const std::string& dir, const std::string& name) {
    return dir + "/" + name;
}

} // namespace

void write_plot_file(const std::string& path, const std::string& text) {
    write_whole_file(path, [&](std::ostream& f) { f << text; }); // checked to the close
}

bool have_gnuplot() {
    return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

std::string png_terminal() {
    static const std::string term =
        std::system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") == 0 ? "pngcairo" : "png";
    return term;
}

void run_gnuplot(const std::string& dir, const std::string& script) {
    // `cd --` and ./NAME: a directory or script whose name starts with '-' is a name, never
    // an option of cd or gnuplot.
    const std::string cmd =
        fmt::format("cd -- {} && gnuplot {} 2>{}", shell_quoted(dir), shell_quoted("./" + script),
                    shell_quoted("./" + script + ".log"));
    const int rc = std::system(cmd.c_str());
    if (rc != 0)
        throw error(error_kind::io, fmt::format("gnuplot failed on {}/{} (status {}), see {}.log",
                                                dir, script, rc, script));
}

void plot_scaling(const scaling_result& r, const std::string& dir, const std::string& stem) {
    const bool strong = r.scaling != "weak";
    const double s = std::isfinite(r.serial_fraction) ? r.serial_fraction : 0.0;
    plot_panel time = make_panel("median step time", "P (ranks)", "median step time (ms), 95% CI");
    plot_panel eff = make_panel("efficiency", "P (ranks)", "efficiency, 95% bootstrap CI");
    eff.y_from_zero = true;
    panel_series measured{"measured", {}}, ideal{"ideal", {}}, amdahl{"Amdahl", {}};
    panel_series e_measured{"measured", {}}, e_ideal{"ideal", {}}, e_amdahl{"Amdahl", {}};
    for (const auto& pt : r.points) {
        const double rel = static_cast<double>(pt.p) / r.base_p;
        const double p = pt.p;
        panel_point m{p, pt.time * 1e3, pt.time_lo * 1e3, pt.time_hi * 1e3};
        panel_point e{p, pt.efficiency, pt.efficiency_lo, pt.efficiency_hi};
        if (pt.source) {
            m = about_case(m, *pt.source);
            e = about_case(e, *pt.source);
        }
        measured.points.push_back(m);
        ideal.points.push_back({p, (strong ? r.base_time / rel : r.base_time) * 1e3, NAN, NAN});
        amdahl.points.push_back({p, r.base_time * (s + (1 - s) / rel) * 1e3, NAN, NAN});
        e_measured.points.push_back(e);
        e_ideal.points.push_back({p, 1.0, NAN, NAN});
        e_amdahl.points.push_back({p, 1.0 / (s * rel + 1 - s), NAN, NAN});
    }
    if (strong) {
        amdahl.name = e_amdahl.name = fmt::format("Amdahl s={:.4f}", s);
        time.series = {measured, ideal, amdahl};
        eff.series = {e_measured, e_ideal, e_amdahl};
    } else {
        time.series = {measured, ideal};
        eff.series = {e_measured, e_ideal};
    }
    draw_panels({time, eff},
                fmt::format("{} ({} scaling, base P={})", r.label, r.scaling, r.base_p), dir, stem,
                2);
}

bool plot_breakdown(const std::vector<case_summary>& rows, const std::string& dir,
                    const std::string& stem, std::size_t top) {
    struct bar {
        std::string label;
        double compute, comm, other; // percent of the step
    };
    std::vector<bar> bars;
    // One rank has nothing to communicate; a collective is all communication.
    auto drawn = [](const pooled_case& c) {
        return !c.launches.empty() && c.world_size >= 2 && c.job != "collectives";
    };
    std::vector<const pooled_case*> cases; // labels drop what all drawn cases share
    for (const case_summary& r : rows)
        if (drawn(*r.source))
            cases.push_back(r.source);
    const param_list common = common_params(cases);
    for (const case_summary& r : rows) {
        if (!drawn(*r.source))
            continue;
        const time_breakdown b = breakdown(*r.source);
        const double c = std::isfinite(b.compute_s) ? b.compute_s : 0;
        const double w = std::isfinite(b.comm_wait_s) ? b.comm_wait_s : 0;
        const double total = c + w + b.other_s;
        if ((!std::isfinite(b.compute_s) && !std::isfinite(b.comm_wait_s)) || !(total > 0))
            continue;
        bars.push_back(
            {strip_params(r.source->label(), common) + fmt::format(" P={}", r.source->world_size),
             100 * c / total, 100 * w / total, 100 * b.other_s / total});
    }
    if (bars.empty())
        return false;
    // The cases where communication is most exposed first; the rest as one mean bar.
    std::stable_sort(bars.begin(), bars.end(),
                     [](const bar& a, const bar& b) { return a.comm > b.comm; });
    std::size_t rest_count = 0;
    if (bars.size() > top + 1) {
        rest_count = bars.size() - top;
        bar rest{fmt::format("{} other cases (mean)", bars.size() - top), 0, 0, 0};
        for (std::size_t i = top; i < bars.size(); ++i) {
            rest.compute += bars[i].compute / static_cast<double>(bars.size() - top);
            rest.comm += bars[i].comm / static_cast<double>(bars.size() - top);
            rest.other += bars[i].other / static_cast<double>(bars.size() - top);
        }
        bars.resize(top);
        bars.push_back(rest);
    }
    std::string data = "# y x0 x1 (compute, then comm wait, then other: one block each)\n";
    std::string tics;
    std::size_t longest = 0;
    for (int part = 0; part < 3; ++part) {
        for (std::size_t i = 0; i < bars.size(); ++i) {
            const bar& b = bars[i];
            const double y = static_cast<double>(bars.size() - 1 - i);
            const double x0 = part == 0 ? 0 : part == 1 ? b.compute : b.compute + b.comm;
            const double x1 = x0 + (part == 0 ? b.compute : part == 1 ? b.comm : b.other);
            data += fmt::format("{} {:.4f} {:.4f}\n", y, x0, x1);
            if (part == 0) {
                tics +=
                    fmt::format("{}{} {}", tics.empty() ? "" : ", ", gnuplot_string(b.label), y);
                longest = std::max(longest, b.label.size());
            }
        }
        data += "\n\n";
    }
    write_plot_file(path_in(dir, stem + ".dat"), data);
    const int label_px = static_cast<int>(longest * 7); // Sans 9: every label whole
    std::string gp =
        header(stem + ".png", 700 + label_px, 160 + 34 * static_cast<int>(bars.size()));
    const std::size_t grouped = bars.size() > top ? rest_count : 0;
    gp += "set termoption noenhanced\nset title " +
          gnuplot_wrapped(
              fmt::format(
                  "Share of step time, mean over ranks and iterations: the {} "
                  "case(s) with the most exposed communication (P > 1, collectives aside){}",
                  bars.size() - (grouped ? 1 : 0),
                  grouped ? fmt::format(", then the other {} (mean)", grouped) : std::string()),
              90) +
          "\n";
    gp += fmt::format("set lmargin at screen {:.3f}\n",
                      static_cast<double>(label_px + 20) / (700 + label_px));
    gp += "set xrange [0:100]\nset xlabel '% of step time'\nset key above horizontal\n"
          "unset grid\nset grid xtics\nset style fill solid 0.85 border -1\n";
    gp += fmt::format("set yrange [-0.6:{}]\nset ytics ({}) font ',9'\n",
                      static_cast<double>(bars.size()) - 0.4, tics);
    const std::string dat = gnuplot_string(stem + ".dat");
    gp += fmt::format("plot {0} index 0 u 2:1:2:3:($1-0.38):($1+0.38) w boxxyerror lc rgb "
                      "'#0072B2' t 'compute', {0} index 1 u 2:1:2:3:($1-0.38):($1+0.38) w "
                      "boxxyerror lc rgb '#D55E00' t 'exposed communication (comm wait)', {0} "
                      "index 2 u 2:1:2:3:($1-0.38):($1+0.38) w boxxyerror lc rgb '#BBBBBB' t "
                      "'other (sync, copies)'\n",
                      dat);
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
    return true;
}

namespace {

/// A logarithmic colour scale where one panel's values span more than a decade (a few
/// disturbed iterations would otherwise paint every ordinary one black), else linear.
std::string colour_scale(const case_data& c, const std::vector<std::size_t>& rows,
                         const std::vector<double>& v) {
    double lo = INFINITY, hi = 0;
    for (std::size_t r : rows)
        for (std::size_t k = 0; k < c.world; ++k) {
            lo = std::min(lo, v[r * c.world + k]);
            hi = std::max(hi, v[r * c.world + k]);
        }
    if (!(lo > 0 && hi > 10 * lo))
        return "unset logscale cb\nset cbrange [*:*]\nset cbtics autofreq\nset cblabel 'ms' offset "
               "1,0\n";
    // Labelled 1-2-5 tics over the range (gnuplot's log tics label decades only), fewer
    // where it spans more decades.
    const std::vector<double> steps = hi > 1e4 * lo   ? std::vector<double>{1}
                                      : hi > 100 * lo ? std::vector<double>{1, 3}
                                                      : std::vector<double>{1, 2, 5};
    std::string tics;
    for (double decade = std::pow(10.0, std::floor(std::log10(lo * 1e3))); decade <= hi * 1e3;
         decade *= 10)
        for (double m : steps)
            if (m * decade >= lo * 1e3 && m * decade <= hi * 1e3)
                tics +=
                    fmt::format("{}'{:g}' {:g}", tics.empty() ? "" : ", ", m * decade, m * decade);
    return fmt::format("set logscale cb\nset cbrange [{:g}:{:g}]\nset cbtics ({})\n"
                       "set cblabel 'ms (log scale)' offset 2,0\n",
                       lo * 1e3, hi * 1e3, tics);
}

} // namespace

void plot_heatmap(const case_data& c, const std::string& title, const std::string& dir,
                  const std::string& stem) {
    const auto rows = c.measured_rows();
    // A compute panel only where there is compute to show (collectives record zeros).
    const bool with_compute =
        std::any_of(c.compute_s.begin(), c.compute_s.end(), [](double v) { return v > 0; });
    auto matrix = [&](const std::vector<double>& v) {
        std::string out;
        for (std::size_t k = 0; k < c.world; ++k) {
            for (std::size_t i = 0; i < rows.size(); ++i)
                out += fmt::format("{}{:.6g}", i ? " " : "", v[rows[i] * c.world + k] * 1e3);
            out += "\n";
        }
        return out;
    };
    write_plot_file(path_in(dir, stem + "_time.dat"), matrix(c.time_s));
    if (with_compute)
        write_plot_file(path_in(dir, stem + "_compute.dat"), matrix(c.compute_s));
    std::string gp = header(stem + ".png", 1100, with_compute ? 720 : 420);
    gp += "set palette rgbformulae 34,35,36\nunset grid\nset xlabel 'measured iteration'\n"
          "set ylabel 'rank'\n";
    gp += fmt::format("set yrange [-0.5:{}]\nset xrange [-0.5:{}]\n", c.world - 0.5,
                      rows.size() - 0.5);
    gp += c.world <= 32 ? "set ytics 1\n" : "";
    if (with_compute)
        gp += "set multiplot layout 2,1 title " + gnuplot_wrapped(title, 115) + " noenhanced\n";
    gp += colour_scale(c, rows, c.time_s);
    gp += fmt::format("set title {} noenhanced\nplot {} matrix w image notitle\n",
                      with_compute ? gnuplot_string("time_s per rank (whole step)")
                                   : gnuplot_wrapped(title + ": time_s per rank", 115),
                      gnuplot_string(stem + "_time.dat"));
    if (with_compute)
        gp += colour_scale(c, rows, c.compute_s) +
              fmt::format("set title 'compute_s per rank' noenhanced\nplot {} matrix w image "
                          "notitle\nunset multiplot\n",
                          gnuplot_string(stem + "_compute.dat"));
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
}

} // namespace ringscale::analysis
