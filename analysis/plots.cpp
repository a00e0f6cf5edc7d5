#include "plots.hpp"

#include "resources.hpp"
#include "src/base/error.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>

namespace ringscale::analysis {

namespace {

// A confidence bound that could not be computed (too few samples) is drawn as a zero-width
// bar at the point itself: gnuplot drops a whole errorbar row with a missing column.
double or_point(double bound, double point) {
    return std::isfinite(bound) ? bound : point;
}

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

/// Titles are used inside gnuplot strings: keep them short and free of underscores'
/// subscript meaning by disabling enhanced text.
std::string short_title(const std::string& s, std::size_t max = 90) {
    return s.size() <= max ? s : s.substr(0, max - 3) + "...";
}

} // namespace

void write_plot_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
    if (!f)
        throw error(error_kind::io, fmt::format("cannot write {}", path));
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
    const std::string cmd = fmt::format("cd {} && gnuplot {} 2>{}", shell_quoted(dir),
                                        shell_quoted(script), shell_quoted(script + ".log"));
    const int rc = std::system(cmd.c_str());
    if (rc != 0)
        throw error(error_kind::io, fmt::format("gnuplot failed on {}/{} (status {}), see {}.log",
                                                dir, script, rc, script));
}

void plot_scaling(const scaling_result& r, const std::string& dir, const std::string& stem) {
    const bool strong = r.scaling != "weak";
    const double s = std::isfinite(r.serial_fraction) ? r.serial_fraction : 0.0;
    std::string data = "# P median_s lo_s hi_s ideal_s amdahl_s eff eff_lo eff_hi amdahl_eff\n";
    for (const auto& pt : r.points) {
        const double rel = static_cast<double>(pt.p) / r.base_p;
        const double ideal = strong ? r.base_time / rel : r.base_time;
        const double amdahl = r.base_time * (s + (1 - s) / rel);
        const double amdahl_eff = 1.0 / (s * rel + 1 - s);
        data += fmt::format("{} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.6g} {:.6g} {:.6g} {:.6g}\n",
                            pt.p, pt.time * 1e3, or_point(pt.time_lo, pt.time) * 1e3,
                            or_point(pt.time_hi, pt.time) * 1e3, ideal * 1e3, amdahl * 1e3,
                            pt.efficiency, or_point(pt.efficiency_lo, pt.efficiency),
                            or_point(pt.efficiency_hi, pt.efficiency), amdahl_eff);
    }
    write_plot_file(path_in(dir, stem + ".dat"), data);
    const std::string dat = gnuplot_string(stem + ".dat");
    std::string gp = header(stem + ".png", 1100, 480);
    gp += "set datafile missing 'nan'\nset multiplot layout 1,2 title " +
          gnuplot_string(short_title(r.label, 110) +
                         fmt::format("  ({} scaling, base P={})", r.scaling, r.base_p)) +
          " noenhanced\n";
    gp += "set logscale x 2\nset logscale y\nset xlabel 'P (ranks)'\nset ylabel 'median step "
          "time (ms), 95% CI'\nset key inside top right\n";
    gp += fmt::format("plot {0} u 1:2:3:4 w yerrorlines lw 2 pt 7 t 'measured', {0} u 1:5 w l "
                      "dt 2 lw 2 t 'ideal'",
                      dat);
    if (strong)
        gp += fmt::format(", {} u 1:6 w l dt 3 lw 2 t 'Amdahl s={:.4f}'", dat, s);
    gp += "\nunset logscale y\nset ylabel 'efficiency'\nset yrange [0:1.15]\n"
          "set key inside bottom left\n";
    gp += fmt::format("plot {0} u 1:7:8:9 w yerrorlines lw 2 pt 7 t 'measured (bootstrap CI)', "
                      "1 w l dt 2 lw 2 t 'ideal'",
                      dat);
    if (strong)
        gp += fmt::format(", {} u 1:10 w l dt 3 lw 2 t 'Amdahl'", dat);
    gp += "\nunset multiplot\n";
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
}

bool plot_busbw(const std::vector<case_summary>& rows, const std::string& dir,
                const std::string& stem) {
    // series name -> lines "bytes busbw lo hi" (GB/s)
    std::map<std::string, std::map<double, std::string>> series;
    for (const case_summary& s : rows) {
        const pooled_case& p = *s.source;
        if (p.job != "collectives" || !s.busbw || p.launches.empty())
            continue;
        const case_data& c = *p.launches.front();
        const double bytes = c.number(schema::attr::bytes).value_or(0);
        const double factor = c.number(schema::attr::busbw_factor).value_or(1.0);
        const std::string name = fmt::format("{} {} P={}", c.text(schema::attr::op, p.variant),
                                             c.text(schema::attr::device), p.world_size);
        const double bw = *s.busbw / 1e9;
        series[name][bytes] = fmt::format("{} {:.6g} {:.6g} {:.6g}\n", bytes, bw,
                                          or_point(bytes * factor / s.median.hi / 1e9, bw),
                                          or_point(bytes * factor / s.median.lo / 1e9, bw));
    }
    if (series.empty())
        return false;
    std::string data;
    std::string plot;
    int index = 0;
    for (const auto& [name, points] : series) {
        data += "# " + terminal_text(name) + "\n";
        for (const auto& [b, line] : points)
            data += line;
        data += "\n\n";
        plot += fmt::format("{}{} index {} u 1:2:3:4 w yerrorlines lw 2 t {}", index ? ", " : "",
                            gnuplot_string(stem + ".dat"), index, gnuplot_string(name));
        ++index;
    }
    write_plot_file(path_in(dir, stem + ".dat"), data);
    std::string gp = header(stem + ".png", 1000, 560);
    gp += "set datafile missing 'nan'\nset title 'Bus bandwidth against message size (nccl-tests "
          "busbw convention, 95% CI from the median time CI)' noenhanced\n";
    gp += "set logscale x 2\nset format x '%.0b%B'\nset xlabel 'message size (bytes)'\n"
          "set ylabel 'busbw (GB/s)'\nset yrange [0:*]\nset key noenhanced\n";
    gp += "plot " + plot + "\n";
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
    return true;
}

bool plot_breakdown(const std::vector<case_summary>& rows, const std::string& dir,
                    const std::string& stem) {
    std::string data = "# id compute_pct comm_wait_pct other_pct\n";
    int drawn = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].source->launches.empty())
            continue;
        const time_breakdown b = breakdown(*rows[i].source);
        if (!std::isfinite(b.compute_s) && !std::isfinite(b.comm_wait_s))
            continue;
        const double c = std::isfinite(b.compute_s) ? b.compute_s : 0;
        const double w = std::isfinite(b.comm_wait_s) ? b.comm_wait_s : 0;
        const double total = c + w + b.other_s;
        if (!(total > 0))
            continue;
        data +=
            fmt::format("\"c{} P={}\" {:.4f} {:.4f} {:.4f}\n", i + 1, rows[i].source->world_size,
                        100 * c / total, 100 * w / total, 100 * b.other_s / total);
        ++drawn;
    }
    if (drawn == 0)
        return false;
    write_plot_file(path_in(dir, stem + ".dat"), data);
    std::string gp = header(stem + ".png", std::max(800, 80 + 34 * drawn), 560);
    gp += "set title 'Share of step time: compute vs exposed communication (mean over ranks "
          "and iterations)' noenhanced\nset style data histograms\nset style histogram rowstacked\n"
          "set style fill solid 0.85 border -1\nset boxwidth 0.75\nset yrange [0:100]\n"
          "set ylabel '% of step time'\nset xtics rotate by -60 noenhanced\nset key below\n";
    gp += fmt::format("plot {0} u 2:xtic(1) t 'compute', '' u 3 t 'exposed communication "
                      "(comm wait)', '' u 4 t 'other (sync, launch, copies)'\n",
                      gnuplot_string(stem + ".dat"));
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
    return true;
}

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
          "set ylabel 'rank'\nset cblabel 'ms'\n";
    gp += fmt::format("set yrange [-0.5:{}]\nset xrange [-0.5:{}]\n", c.world - 0.5,
                      rows.size() - 0.5);
    gp += c.world <= 32 ? "set ytics 1\n" : "";
    if (with_compute)
        gp += "set multiplot layout 2,1 title " + gnuplot_string(short_title(title, 120)) +
              " noenhanced\n";
    gp += fmt::format("set title {} noenhanced\nplot {} matrix w image notitle\n",
                      gnuplot_string(with_compute ? "time_s per rank (whole step)"
                                                  : short_title(title, 100) + ": time_s per rank"),
                      gnuplot_string(stem + "_time.dat"));
    if (with_compute)
        gp += fmt::format("set title 'compute_s per rank' noenhanced\nplot {} matrix w image "
                          "notitle\nunset multiplot\n",
                          gnuplot_string(stem + "_compute.dat"));
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
}

} // namespace ringscale::analysis

namespace ringscale::analysis {

bool plot_memory(const std::vector<scaling_result>& results, const std::string& dir,
                 const std::string& stem, std::size_t max_families) {
    // One data block per family: "P rss_mib host_mib" (max over ranks and launches).
    std::string data, plot_rss, plot_host;
    std::size_t blocks = 0;
    for (const scaling_result& r : results) {
        if (blocks == max_families)
            break;
        std::string rows;
        for (const scaling_point& pt : r.points) {
            const auto rss = peak_memory(*pt.source, schema::ds_peak_rss_bytes);
            const auto host = peak_memory(*pt.source, schema::ds_peak_host_bytes);
            if (rss || host)
                rows += fmt::format("{} {:.6g} {:.6g}\n", pt.p, rss.value_or(NAN) / 1048576.0,
                                    host.value_or(NAN) / 1048576.0);
        }
        if (rows.empty())
            continue;
        data += fmt::format("# {}\n{}\n\n", terminal_text(r.label), rows);
        const std::string t = gnuplot_string(short_title(r.label, 45));
        const char* sep = blocks ? ", " : "";
        plot_rss += fmt::format("{}{} index {} u 1:2 w lp lw 2 pt 7 t {}", sep,
                                gnuplot_string(stem + ".dat"), blocks, t);
        plot_host += fmt::format("{}{} index {} u 1:3 w lp lw 2 pt 7 t {}", sep,
                                 gnuplot_string(stem + ".dat"), blocks, t);
        ++blocks;
    }
    if (blocks == 0)
        return false;
    write_plot_file(path_in(dir, stem + ".dat"), data);
    std::string gp = header(stem + ".png", 1200, 480);
    gp += "set datafile missing 'nan'\nset termoption noenhanced\nset multiplot layout 1,2 "
          "title 'peak memory per rank (max over ranks) against P'\nset logscale x 2\n"
          "set xlabel 'P (ranks)'\nset key inside top right font ',8'\n";
    gp += "set ylabel 'peak RSS (MiB)'\nplot " + plot_rss + "\n";
    gp += "set ylabel 'peak job buffers, host (MiB)'\nplot " + plot_host + "\n";
    gp += "unset multiplot\n";
    write_plot_file(path_in(dir, stem + ".gp"), gp);
    run_gnuplot(dir, stem + ".gp");
    return true;
}

} // namespace ringscale::analysis
