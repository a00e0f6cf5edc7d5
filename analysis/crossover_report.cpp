#include "crossover_report.hpp"

#include "plots.hpp"

#include <fmt/format.h>
#include <map>

namespace ringscale::analysis {

namespace {

/// One plot: cells of one shape and P (ascending S).
void plot_one(const std::vector<const crossover_cell*>& cells,
              const std::vector<crossover_point>& crossings, const std::string& dir,
              const std::string& stem) {
    std::map<std::string, std::string> series; // scheme -> "S t\n" lines
    for (const crossover_cell* c : cells)
        for (const scheme_point& s : c->schemes)
            series[s.scheme] += fmt::format("{} {:.6g}\n", c->seq_len, s.median_s);
    std::string data, plot;
    int index = 0;
    for (const auto& [name, lines] : series) {
        data += "# " + terminal_text(name) + "\n" + lines + "\n\n";
        plot += fmt::format("{}{} index {} u 1:2 w linespoints lw 2 pt 7 t {}", index ? ", " : "",
                            gnuplot_string(stem + ".dat"), index, gnuplot_string(name));
        ++index;
    }
    write_plot_file(dir + "/" + stem + ".dat", data);
    const crossover_cell& first = *cells.front();
    std::string gp = fmt::format("set terminal {} size 900,520 font 'Sans,10'\nset output {}\n",
                                 png_terminal(), gnuplot_string(stem + ".png"));
    gp += fmt::format("set title \"Median step time against S at P={}; dashed: confirmed "
                      "crossings (CIs exclude a tie)\\n{}\" noenhanced\n",
                      first.world_size, first.shape);
    gp += "set logscale x 2\nset logscale y\nset format x '%.0b%B'\nset autoscale xfix\n"
          "set offsets graph 0.03, graph 0.03, 0, 0\nset xlabel 'sequence length S (tokens)'\n"
          "set ylabel 'median step time (s)'\nset key noenhanced left top\nset grid\n";
    for (const crossover_point& p : crossings)
        if (p.confirmed && p.shape == first.shape && p.world_size == first.world_size)
            gp += fmt::format("set arrow from {:.6g}, graph 0 to {:.6g}, graph 1 nohead dt 2\n",
                              p.boundary, p.boundary);
    gp += "plot " + plot + "\n";
    write_plot_file(dir + "/" + stem + ".gp", gp);
    run_gnuplot(dir, stem + ".gp");
}

} // namespace

std::string crossover_section(const crossover_result& r, const std::string& dir, bool plots,
                              std::size_t max_plots, std::vector<std::string>& pngs) {
    if (r.cells.empty())
        return {};
    std::string md = "\n## Crossovers\n\nFor each (S, P) measured with two or more attention "
                     "schemes: the fastest, its margin over the runner-up (t(runner-up) / "
                     "t(fastest) - 1, 95% bootstrap CI over iterations) and peak memory per "
                     "rank beside the scheme that needs the least.\n\n";
    md += render(crossover_cell_table(r), output_format::md);
    md += "\nWhere two schemes trade places along S at fixed P (boundary: log(tA/tB) "
          "interpolated linearly in log S between the bracketing grid points):\n\n";
    md += r.crossings.empty() ? std::string("No crossover between measured sequence lengths.\n")
                              : render(crossover_point_table(r), output_format::md);
    if (!plots)
        return md;
    std::size_t n = 0;
    for (std::size_t i = 0; i < r.cells.size() && n < max_plots;) {
        std::vector<const crossover_cell*> run;
        std::size_t j = i;
        for (; j < r.cells.size() && r.cells[j].shape == r.cells[i].shape &&
               r.cells[j].world_size == r.cells[i].world_size;
             ++j)
            run.push_back(&r.cells[j]);
        i = j;
        if (run.size() < 2)
            continue;
        const std::string stem = fmt::format("crossover_{:02}", ++n);
        plot_one(run, r.crossings, dir, stem);
        pngs.push_back(stem + ".png");
        md += fmt::format("\n![{}]({}.png)\n", stem, stem);
    }
    return md;
}

} // namespace ringscale::analysis
