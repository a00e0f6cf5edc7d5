#include "map.hpp"

#include "analysis/presentation/plots.hpp"
#include "analysis/presentation/views.hpp"
#include "src/base/text_escape.hpp"

#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <vector>

namespace ringscale::analysis::predict {

namespace {

const char* const scheme_names[] = {"ring", "allgather", "ulysses", "hybrid"};
const char scheme_marks[] = {'R', 'A', 'U', 'H'};
/// Schemes within 1% of the fastest are a tie: the scheme does not matter there.
constexpr double tie_margin = 0.01;

/// A layout name from a fixed list (the file's text never reaches a plot).
std::string known_layout(const std::string& l) {
    for (const char* k : {"contiguous", "zigzag", "striped"})
        if (l == k)
            return k;
    return "contiguous";
}

target scheme_target(const target& base, const std::string& scheme, int p, double s, int u,
                     const hardware_profile& hw) {
    target t = base;
    t.measured = nullptr;
    t.threads_used.reset();
    t.affinity_cores.reset();
    t.node_cores_used.reset();
    t.job = scheme == "ring" ? "ring_attention" : "context_parallel";
    t.variant = scheme == "ring" ? "ring/" + known_layout(t.identity["layout"]) : scheme;
    t.identity["seq_len"] = fmt::format("{:.0f}", s);
    t.identity.erase("seq_len_per_rank");
    t.identity["scaling"] = "strong";
    t.identity["ulysses_degree"] = std::to_string(u);
    t.identity["device"] = hw.device;
    t.identity["dtype"] = hw.dtype;
    const int rpn = static_cast<int>(hw.ranks_per_node);
    t.where = p <= rpn ? placement{p, 1, p} : placement{p, p / rpn, rpn};
    return t;
}

map_scheme price(const target& base, const std::string& scheme, int p, double s,
                 const hardware_profile& hw, const figures& f) {
    map_scheme m;
    m.name = scheme;
    if (scheme != "hybrid") {
        m.p = predict_target(scheme_target(base, scheme, p, s, 0, hw), f);
    } else { // the best Ulysses degree that runs (1 < u < P), as a user would tune it
        m.p.refusal = "no Ulysses degree 1 < u < P divides P, heads and kv_heads";
        for (int u = 2; u < p; u *= 2) {
            const step_prediction x = predict_target(scheme_target(base, scheme, p, s, u, hw), f);
            if (x.ok() && (!m.p.ok() || x.time.total() < m.p.time.total()))
                m.p = x;
        }
    }
    m.fits = m.p.ok() && m.p.memory_bytes <= hw.device_memory_gib * (1u << 30);
    return m;
}

map_cell price_cell(const target& base, int p, double s, const hardware_profile& hw,
                    const figures& f) {
    map_cell c;
    c.p = p;
    c.s = s;
    for (const char* name : scheme_names)
        c.schemes.push_back(price(base, name, p, s, hw, f));
    int second = -1;
    for (int i = 0; i < static_cast<int>(c.schemes.size()); ++i) {
        const map_scheme& m = c.schemes[static_cast<std::size_t>(i)];
        if (!m.fits)
            continue;
        const double t = m.p.time.total();
        if (c.fastest < 0 || t < c.schemes[static_cast<std::size_t>(c.fastest)].p.time.total()) {
            second = c.fastest;
            c.fastest = i;
        } else if (second < 0 || t < c.schemes[static_cast<std::size_t>(second)].p.time.total()) {
            second = i;
        }
    }
    if (c.fastest >= 0 && second >= 0)
        c.margin = c.schemes[static_cast<std::size_t>(second)].p.time.total() /
                       c.schemes[static_cast<std::size_t>(c.fastest)].p.time.total() -
                   1;
    return c;
}

/// "12%", "3.4%": one decimal below 10%, so a near tie does not read as 0%.
std::string margin_text(double margin) {
    return 100 * margin < 10 ? fmt::format("{:.1f}%", 100 * margin)
                             : fmt::format("{:.0f}%", 100 * margin);
}

/// Schemes within tie_margin of the fastest (the fastest first); one entry when it wins clearly.
std::vector<std::size_t> tied(const map_cell& c) {
    std::vector<std::size_t> out;
    if (c.fastest < 0)
        return out;
    const auto best = static_cast<std::size_t>(c.fastest);
    out.push_back(best);
    for (std::size_t i = 0; i < c.schemes.size(); ++i)
        if (i != best && c.schemes[i].fits &&
            c.schemes[i].p.time.total() <= (1 + tie_margin) * c.schemes[best].p.time.total())
            out.push_back(i);
    return out;
}

/// Marks of the schemes that run but do not fit in device memory ("A U"), "" when all fit.
std::string out_of_memory(const map_cell& c) {
    std::string oom;
    for (std::size_t i = 0; i < c.schemes.size(); ++i)
        if (c.schemes[i].p.ok() && !c.schemes[i].fits)
            oom += std::string(oom.empty() ? "" : " ") + scheme_marks[i];
    return oom;
}

/// The heatmap's label: "u4 +12%" (the hybrid's degree), "+3.4%", "only", "tie R A H".
std::string plot_label(const map_cell& c) {
    if (c.fastest < 0)
        return "";
    const std::vector<std::size_t> ties = tied(c);
    std::string s;
    if (ties.size() > 1) {
        s = "tie";
        for (std::size_t i : ties)
            s += std::string(" ") + scheme_marks[i];
    } else {
        const std::string& label = c.schemes[static_cast<std::size_t>(c.fastest)].p.label;
        if (label.rfind("hybrid/", 0) == 0)
            s = label.substr(7) + " ";
        s += std::isfinite(c.margin) ? "+" + margin_text(c.margin) : "only";
    }
    const std::string oom = out_of_memory(c);
    return oom.empty() ? s : s + " [" + oom + "]";
}

std::string cell_text(const map_cell& c) {
    std::string s;
    if (c.fastest < 0) {
        bool any_runs = false;
        for (const map_scheme& m : c.schemes)
            any_runs = any_runs || m.p.ok();
        s = any_runs ? "none fits" : "-";
    } else if (const std::vector<std::size_t> ties = tied(c); ties.size() > 1) {
        s = "tie";
        for (std::size_t i = 0; i < ties.size(); ++i)
            s += (i ? ", " : " ") + c.schemes[ties[i]].p.label;
    } else {
        s = c.schemes[static_cast<std::size_t>(c.fastest)].p.label;
        s += std::isfinite(c.margin) ? " +" + margin_text(c.margin) : " (only)";
    }
    const std::string oom = out_of_memory(c);
    return oom.empty() ? s : s + " [" + oom + "]";
}

/// A sentence per scheme that is nowhere the fastest alone (ties aside), with why where it did
/// not run: the map's key has a colour for it that no cell has.
std::string never_fastest(const crossover_map& m) {
    std::string out;
    for (std::size_t k = 0; k < std::size(scheme_names); ++k) {
        bool wins = false;
        const map_cell* refused = nullptr;
        int refusals = 0;
        for (const map_cell& c : m.cells) {
            wins = wins || (tied(c).size() == 1 && c.fastest == static_cast<int>(k));
            if (k < c.schemes.size() && !c.schemes[k].p.ok() && ++refusals == 1)
                refused = &c;
        }
        if (wins)
            continue;
        out += fmt::format(" {} is nowhere the fastest alone", scheme_names[k]);
        if (refused)
            out += fmt::format("; it does not run in {} of {} cells (at P = {}, S = {}: {})",
                               refusals, m.cells.size(), refused->p, size_text(refused->s),
                               refused->schemes[k].p.refusal);
        out += ".";
    }
    return out;
}

} // namespace

crossover_map build_map(const std::vector<target>& cases, const std::vector<at_field>& overrides,
                        const hardware_profile& hw) {
    crossover_map m;
    m.assumptions = describe(hw);
    m.plot_title = hw.source == "built-in" ? "assumed hardware: " + hw.name
                                           : std::string("assumed hardware: the profile file "
                                                         "named in report.md");
    const target* base = nullptr;
    for (const target& t : cases)
        if (!base && (t.job == "ring_attention" || t.job == "context_parallel"))
            base = &t;
    if (!base) {
        m.refusal = "no attention case (ring_attention, context_parallel) to take the problem from";
        return m;
    }
    std::vector<at_field> shape;
    for (const at_field& f : overrides)
        if (f.name != "world_size" && f.name != "seq_len" && f.name != "nodes" &&
            f.name != "ranks_per_node")
            shape.push_back({f.name, {f.values.front()}});
    const target tpl = shape.empty() ? *base : expand_at({*base}, shape, &hw).front();
    for (int p = 1; p <= 4096; p *= 2)
        if (p < hw.ranks_per_node || p % static_cast<int>(hw.ranks_per_node) == 0)
            m.ps.push_back(p);
    for (double s : {4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 10485760.0})
        m.ss.push_back(s);
    const figures f = profile_figures(hw);
    for (double s : m.ss)
        for (int p : m.ps)
            m.cells.push_back(price_cell(tpl, p, s, hw, f));
    auto num = [&](const char* k, const char* d) {
        const auto it = tpl.identity.find(k);
        return it == tpl.identity.end() ? std::string(d)
                                        : std::to_string(std::atoll(it->second.c_str()));
    };
    const auto pass = tpl.identity.find("pass");
    m.shape = fmt::format(
        "B={} H={} Hkv={} D={} {} {} {} {}", num("batch", "1"), num("heads", "8"),
        num("kv_heads", "0"), num("head_dim", "64"), num("causal", "0") == "1" ? "causal" : "full",
        known_layout(tpl.identity.count("layout") ? tpl.identity.at("layout") : ""),
        pass != tpl.identity.end() && pass->second == "fwd+bwd" ? "fwd+bwd" : "fwd",
        hw.dtype == "bf16" || hw.dtype == "fp16" ? hw.dtype : "fp32");
    return m;
}

table map_table(const crossover_map& m) {
    table t;
    t.caption = fmt::format("fastest scheme +margin over the runner-up (hybrid/uN: its best "
                            "Ulysses degree N); tie: schemes within 1% of the fastest; [R A U "
                            "H]: ring, allgather, ulysses, hybrid do not fit in memory; {}",
                            m.shape);
    t.add_column("S \\ P", "seq_len");
    for (int p : m.ps)
        t.add_column(std::to_string(p), fmt::format("P{}", p));
    for (std::size_t i = 0; i < m.ss.size(); ++i) {
        std::vector<cell> row = {cell{size_text(m.ss[i]), m.ss[i]}};
        for (std::size_t j = 0; j < m.ps.size(); ++j)
            row.push_back(text_cell(cell_text(m.cells[i * m.ps.size() + j])));
        t.rows.push_back(row);
    }
    return t;
}

std::optional<crossover_map> report_map(const std::vector<pooled_case>& pooled,
                                        const hardware_profile& hw) {
    std::vector<target> attention;
    for (const pooled_case& c : pooled)
        if (!c.launches.empty() && (c.job == "ring_attention" || c.job == "context_parallel"))
            attention.push_back(target_of(c));
    if (attention.empty())
        return std::nullopt;
    return build_map(attention, {}, hw);
}

std::string map_section(const crossover_map& m, const std::string& dir, bool plots,
                        std::vector<std::string>& pngs) {
    std::string md = "\n## Predicted crossover map at scale\n\n";
    if (!m.refusal.empty())
        return md + "No map: " + markdown_text(m.refusal) + ".\n";
    md += "The cost model (`ringscale-stats predict`) priced ring, all-gather, Ulysses and "
          "hybrid (the best Ulysses degree) for this study's attention problem (" +
          markdown_text(m.shape) + ") on a grid up to P = 4096 and S = 10M. " +
          markdown_text(m.assumptions) + ". These are assumptions, not measurements." +
          markdown_text(never_fastest(m)) + "\n\n";
    md += render(map_table(m), output_format::md);
    if (!plots)
        return md;
    std::string data = "# x(P index) y(S index) scheme(-1 none runs, 0 none fits, 1 ring, "
                       "2 allgather, 3 ulysses, 4 hybrid, 5 tie) label\n";
    for (std::size_t i = 0; i < m.ss.size(); ++i)
        for (std::size_t j = 0; j < m.ps.size(); ++j) {
            const map_cell& c = m.cells[i * m.ps.size() + j];
            bool runs = false;
            for (const map_scheme& s : c.schemes)
                runs = runs || s.p.ok();
            const int category = !runs ? -1 : tied(c).size() > 1 ? 5 : c.fastest + 1;
            data += fmt::format("{} {} {} \"{}\"\n", j, i, category, plot_label(c));
        }
    write_plot_file(dir + "/predict_map.dat", data);
    std::string xt, yt;
    for (std::size_t j = 0; j < m.ps.size(); ++j)
        xt += fmt::format("{}\"{}\" {}", j ? ", " : "", m.ps[j], j);
    for (std::size_t i = 0; i < m.ss.size(); ++i)
        yt += fmt::format("{}\"{}\" {}", i ? ", " : "", size_text(m.ss[i]), i);
    std::string gp = fmt::format("set terminal {} size 1150,600 font 'Sans,10'\nset output "
                                 "'predict_map.png'\n",
                                 png_terminal());
    // Only text generated here reaches the script (a profile file's name stays in report.md).
    gp += "set title \"Predicted fastest attention scheme per (P, S) and its margin over the "
          "runner-up\\n(hybrid: uN its best Ulysses degree; tie: schemes within 1% of the "
          "fastest; [R A U H]: ring, allgather, ulysses, hybrid do not fit in memory)\" "
          "noenhanced\nset bmargin 5\n";
    gp += "set label 1 " + gnuplot_string(m.plot_title + "; " + m.shape) +
          " at screen 0.5, screen 0.03 center noenhanced\n";
    gp += fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]\nset xtics ({})\nset ytics "
                      "({})\n",
                      m.ps.size() - 0.5, m.ss.size() - 0.5, xt, yt);
    gp += "set xlabel 'P (ranks)'\nset ylabel 'sequence length S (tokens)'\n"
          "set cbrange [-1.5:5.5]\nset palette maxcolors 7\nset palette defined (-1 '#ffffff', "
          "0 '#bbbbbb', 1 '#d62728', 2 '#1f77b4', 3 '#2ca02c', 4 '#ff7f0e', 5 '#f3e9b5')\n"
          "set cbtics ('none runs' -1, 'none fits' 0, 'ring' 1, 'allgather' 2, 'ulysses' 3, "
          "'hybrid' 4, 'tie' 5)\n";
    gp += "plot 'predict_map.dat' u 1:2:3 with image notitle, '' u 1:2:4 with labels font "
          "',8' notitle\n";
    write_plot_file(dir + "/predict_map.gp", gp);
    run_gnuplot(dir, "predict_map.gp");
    pngs.push_back("predict_map.png");
    return md + "\n![predicted crossover map](predict_map.png)\n";
}

} // namespace ringscale::analysis::predict
