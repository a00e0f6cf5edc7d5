// PNG plots drawn by gnuplot: each plot writes its data file(s) and a script next to the
// PNG and runs `gnuplot script.gp`, so a reader can restyle and redraw any figure.
#pragma once

#include "analysis/cases/results.hpp"
#include "analysis/comparisons/scaling.hpp"
#include "analysis/measures/summary.hpp"
#include "src/base/text_escape.hpp"

#include <string>
#include <vector>

namespace ringscale::analysis {

/// Gnuplot string literals: ringscale::gnuplot_string (src/base/text_escape.hpp), which no text
/// from a results file can end early.
using ringscale::gnuplot_string;

/// Write a plot's data or script file; throws ringscale::error (io) naming `path`.
void write_plot_file(const std::string& path, const std::string& text);

/// True when a gnuplot executable is on PATH.
bool have_gnuplot();

/// "pngcairo" when this gnuplot has it, else "png".
std::string png_terminal();

/// Run gnuplot on `script` inside `dir` (paths in scripts are relative to it); throws
/// ringscale::error (io) naming the script and its log when gnuplot fails.
void run_gnuplot(const std::string& dir, const std::string& script);

/// Median time and efficiency against P for one family, with CI bars, the ideal line and
/// (strong scaling) Amdahl's bound for the Karp-Flatt serial fraction. Writes `stem`.png.
void plot_scaling(const scaling_result& r, const std::string& dir, const std::string& stem);

/// Horizontal stacked bars of compute, exposed communication and the rest of the step time:
/// the `top` cases (P > 1, collectives aside: all communication) whose communication is most
/// exposed, labelled in full, and the rest
/// as one bar of their mean. False when no such case has compute_s/comm_wait_s.
bool plot_breakdown(const std::vector<case_summary>& rows, const std::string& dir,
                    const std::string& stem, std::size_t top = 12);

/// Per-rank heatmap of time_s (and compute_s when recorded) over the measured iterations of
/// one launch, in ms: stragglers show as bright rows, causal imbalance as a rank gradient.
void plot_heatmap(const case_data& c, const std::string& title, const std::string& dir,
                  const std::string& stem);

} // namespace ringscale::analysis
