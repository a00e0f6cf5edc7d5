#include "crossover_report.hpp"

#include <fmt/format.h>

namespace ringscale::analysis {

std::string crossover_section(const crossover_result& r) {
    if (r.cells.empty())
        return {};
    std::string md = fmt::format(
        "\n## Crossovers\n\nFor each (S, P) measured with two or more attention schemes: the "
        "fastest, its margin over the runner-up (t(runner-up) / t(fastest) - 1) with a 95% "
        "bootstrap CI (launches, then iterations, where each scheme has two or more launches), "
        "the verdict and peak memory per rank beside the scheme that needs the least. A verdict "
        "is 'confirmed' only when the CI clears the noise floor, {:.1f}% ({}); at P=1 every "
        "scheme does the same work and none is ranked.\n\n",
        100 * r.floor.fraction, r.floor.source);
    md += render(crossover_cell_table(r), output_format::md);
    md += "\nWhere two schemes trade places along S at fixed P (boundary: log(tA/tB) "
          "interpolated linearly in log S between the bracketing grid points; ratio: CI of "
          "t(slower) / t(faster) at each end):\n\n";
    md += r.crossings.empty() ? std::string("No crossover between measured sequence lengths.\n")
                              : render(crossover_point_table(r), output_format::md);
    return md;
}

} // namespace ringscale::analysis
