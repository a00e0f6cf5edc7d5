#include "scheme_cells.hpp"

#include "analysis/statistics/bootstrap.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace ringscale::analysis {

namespace {

/// Parameters that name the scheme or the study's axes, not the problem's shape.
bool is_scheme_or_axis(const std::string& name) {
    static const std::set<std::string> names = {
        schema::attr::seq_len,          schema::attr::seq_len_per_rank,
        schema::attr::seq_rule,         schema::attr::scaling,
        schema::attr::layout,           schema::attr::overlap,
        schema::attr::ulysses_degree,   schema::attr::variant,
        schema::attr::ulysses_placement};
    return names.count(name) > 0;
}

std::string param(const pooled_case& c, const std::string& name) {
    for (const auto& [k, v] : c.params)
        if (k == name)
            return v;
    return "";
}

} // namespace

std::string scheme_name(const pooled_case& c) {
    std::string s = c.variant;
    if (c.job == "ring_attention") {
        if (param(c, schema::attr::overlap) == "off")
            s += " overlap=off";
        return s;
    }
    if (const std::string u = param(c, schema::attr::ulysses_degree); !u.empty() && u != "0")
        s += " u=" + u;
    if (c.variant == "hybrid" && param(c, schema::attr::ulysses_placement) == "across")
        s += " across";
    if (const std::string l = param(c, schema::attr::layout); !l.empty() && l != "zigzag")
        s += " layout=" + l;
    return s;
}

namespace {

std::string shape_label(const pooled_case& c) {
    std::string s;
    for (const auto& [k, v] : c.params)
        if (!is_scheme_or_axis(k))
            s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
    if (c.nodes > 1) // the same P on several nodes is another problem than on one
        s += fmt::format(" nodes={}x{}", c.nodes, c.ranks_per_node);
    return s;
}

double case_seq(const pooled_case& c) {
    return c.launches.empty() ? 0 : c.launches.front()->number(schema::attr::seq_len).value_or(0.0);
}

double peak_bytes(const pooled_case& c) {
    double out = 0;
    for (const case_data* d : c.launches)
        for (const char* name : {schema::ds_peak_device_bytes, schema::ds_peak_host_bytes})
            if (auto v = d->max_memory(name); v && *v > 0) {
                out = std::max(out, *v);
                break;
            }
    return out;
}

} // namespace

std::vector<crossover_cell> scheme_cells(const std::vector<pooled_case>& pooled) {
    std::map<std::tuple<std::string, int, double>, crossover_cell> cells;
    for (const pooled_case& c : pooled) {
        if ((c.job != "ring_attention" && c.job != "context_parallel") || c.launches.empty() ||
            case_seq(c) <= 0)
            continue;
        crossover_cell& cell = cells[{shape_label(c), c.world_size, case_seq(c)}];
        cell.shape = shape_label(c);
        cell.world_size = c.world_size;
        cell.seq_len = case_seq(c);
        cell.same_work = c.world_size == 1;
        std::vector<double> steps = c.steps();
        cell.schemes.push_back({scheme_name(c), &c, median_inplace(steps), peak_bytes(c),
                                c.job + "|" + c.variant.substr(0, c.variant.find('/'))});
    }
    std::vector<crossover_cell> out;
    for (auto& [key, cell] : cells) {
        std::stable_sort(
            cell.schemes.begin(), cell.schemes.end(),
            [](const scheme_point& a, const scheme_point& b) { return a.median_s < b.median_s; });
        for (std::size_t i = 0; i < cell.schemes.size(); ++i)
            if (cell.schemes[i].peak_bytes > 0 &&
                (cell.schemes[cell.least_memory].peak_bytes <= 0 ||
                 cell.schemes[i].peak_bytes < cell.schemes[cell.least_memory].peak_bytes))
                cell.least_memory = i;
        out.push_back(std::move(cell));
    }
    return out;
}

} // namespace ringscale::analysis
