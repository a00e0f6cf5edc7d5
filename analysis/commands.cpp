#include "commands.hpp"

#include "bootstrap.hpp"
#include "compare.hpp"
#include "crossover.hpp"
#include "export.hpp"
#include "model_multi_study.hpp"
#include "predict/command.hpp"
#include "predict/map.hpp"
#include "profile.hpp"
#include "reader.hpp"
#include "report.hpp"
#include "resources.hpp"
#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

namespace ringscale::analysis {

namespace {

void note(const std::string& line) {
    std::fprintf(stderr, "ringscale-stats: %s\n", terminal_text(line).c_str());
}

result_set load(const std::vector<std::string>& inputs, const cli_options& o) {
    result_set rs = load_results(inputs, o.strict);
    if (rs.cases.empty())
        throw config_error(fmt::format("no results cases found in {}", fmt::join(inputs, " ")));
    return rs;
}

summary_options summary_opts(const cli_options& o) {
    return {o.remove_outliers, o.level, o.limits};
}

crossover_options crossover_opts(const cli_options& o) {
    return {o.bootstrap, o.seed, o.level, o.min_launches, o.tie_floor};
}

/// What the crossover verdicts rest on, for stderr.
void note_crossover_noise(const crossover_result& r) {
    note(fmt::format("crossover: a margin counts only above the noise floor of {:.1f}% ({}) and "
                     "with 2 or more launches of each scheme (ringscale --repeat N); P=1 cells "
                     "are identical work and never ranked",
                     100 * r.floor.fraction, r.floor.source));
}

std::vector<scaling_result> all_scaling(const std::vector<family>& families, const cli_options& o) {
    std::vector<scaling_result> out;
    std::size_t refused = 0;
    for (const family& f : families) {
        if (f.members.size() < 2)
            continue;
        if (const std::string why = scaling_refusal(f); !why.empty()) {
            if (refused++ == 0)
                note(why);
            continue;
        }
        if (auto r = analyse_scaling(f, {o.base_p, o.bootstrap, o.seed, o.level, o.min_launches}))
            out.push_back(*r);
        else
            note(fmt::format("family {}: no case at base P={}", f.label, o.base_p.value_or(0)));
    }
    if (refused > 1)
        note(fmt::format("... and so for all {} collectives families", refused));
    return out;
}

/// One line when some CIs rest on iterations alone (a case with too few launches).
void note_iteration_level(const std::vector<scaling_result>& results, const cli_options& o) {
    std::size_t n = 0;
    for (const scaling_result& r : results)
        for (const scaling_point& p : r.points)
            n += p.resampled != "launches";
    if (n > 0)
        note(fmt::format("launch-to-launch noise is unknown for {} row(s) (fewer than {} launches "
                         "of the case or its base): their CIs cover iteration noise only (repeat "
                         "launches: ringscale --repeat N)",
                         n, std::max<std::size_t>(2, o.min_launches)));
}

/// Several tables on one stream: one JSON object, or the tables one after another.
void print_tables(std::ostream& out, output_format fmt,
                  const std::vector<std::pair<std::string, table>>& tables) {
    if (fmt == output_format::json) {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [name, t] : tables)
            j[name] = to_json(t);
        out << json_text(j) << "\n";
        return;
    }
    for (std::size_t i = 0; i < tables.size(); ++i)
        out << (i ? "\n" : "") << render(tables[i].second, fmt);
}

/// Report withheld figures; with --strict an impossible figure is an error (exit 2).
void warn_rejected(const std::vector<case_summary>& rows, bool strict) {
    std::size_t noop = 0;
    for (const auto& s : rows)
        noop += s.flags.count("busbw_gbs") && s.flags.at("busbw_gbs") == "no-op";
    if (noop > 0)
        note(fmt::format("{} collectives case(s) at P=1: {}", noop, noop_reason("collectives", 1)));
    for (const auto& s : rows)
        for (const auto& r : s.rejected) {
            if (strict)
                throw config_error(r);
            note(r);
        }
}

/// One note per distinct reason a GPU case has no MFU (an unknown device).
void warn_mfu(const std::vector<case_summary>& rows) {
    std::vector<std::string> seen;
    for (const auto& s : rows)
        if (!s.mfu_note.empty() && std::find(seen.begin(), seen.end(), s.mfu_note) == seen.end()) {
            seen.push_back(s.mfu_note);
            note(s.mfu_note);
        }
}

int cmd_compare(const cli_options& o, std::ostream& out) {
    const result_set base = load({o.base_input}, o);
    const result_set next = load({o.new_input}, o);
    // Matched by identity: a launch's threads and cores are compared, not split on.
    const auto pb = pool_cases(base.cases, true);
    const auto pn = pool_cases(next.cases, true);
    const comparison cmp =
        compare_sets(pb, pn, {o.threshold, o.alpha, o.min_launches, o.bootstrap, o.seed, o.level});
    print_tables(out, o.format, {{"comparisons", compare_table(cmp)}});
    if (const std::size_t n = cmp.iteration_level())
        note(fmt::format("launch-to-launch noise is unknown for {} case(s) with fewer than {} "
                         "launches on a side: differences there are unconfirmed, not "
                         "regressions (repeat launches: ringscale --repeat N)",
                         n, std::max<std::size_t>(2, o.min_launches)));
    for (const auto* c : cmp.only_base)
        note(fmt::format("only in BASE, not compared: {} P={}", c->label(), c->world_size));
    for (const auto* c : cmp.only_new)
        note(fmt::format("only in NEW, not compared: {} P={}", c->label(), c->world_size));
    std::size_t regressions = 0, marked = 0, undecided = 0;
    for (const auto& c : cmp.matched) {
        regressions += c.result == verdict::regression;
        marked += c.marked_base + c.marked_new > 0;
        undecided += c.result == verdict::contended;
    }
    if (marked > 0)
        note(fmt::format("{} case(s) have launches marked as measured on a contended machine or "
                         "while the sentinel drifted: those launches are left out, and {} "
                         "case(s) with none left on a side are not decided (a marked launch never "
                         "calls a regression; the verdict column says why)",
                         marked, undecided));
    note(fmt::format("{} case(s) compared, {} regression(s) (threshold {:g}%, alpha {:g})",
                     cmp.matched.size(), regressions, 100 * o.threshold, o.alpha));
    if (const std::string d = detectability_note(cmp, o.threshold, o.alpha); !d.empty())
        note(d);
    const auto memory = memory_regressions(cmp, o.threshold);
    for (const memory_change& m : memory)
        note(describe(m));
    return regressions + memory.size() > 0 ? 1 : 0;
}

void write_to(const std::string& path, const std::function<void(std::ostream&)>& body) {
    if (path == "-") {
        body(std::cout);
        return;
    }
    std::ofstream f(path);
    if (!f) {
        const std::filesystem::path parent = std::filesystem::path(path).parent_path();
        std::error_code ec;
        if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
            throw error(error_kind::io,
                        fmt::format("cannot write {}: directory {} does not exist (create it "
                                    "first)",
                                    path, parent.string()));
        throw error(error_kind::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    body(f);
    if (!f)
        throw error(error_kind::io, fmt::format("error writing {}", path));
}

int cmd_report(const cli_options& o, std::ostream& out) {
    // The map's hardware first: a bad profile file is refused before anything is read.
    const predict::hardware_profile hw =
        predict::load_hardware(o.hardware.empty() ? "h100" : o.hardware);
    const result_set rs = load(o.inputs, o);
    const auto pooled = pool_cases(rs.cases, o.pool_resources);
    for (const std::string& line : resource_notes(pooled))
        note(line);
    const auto rows = summarize_all(pooled, summary_opts(o));
    warn_rejected(rows, o.strict);
    warn_mfu(rows);
    const auto families = find_families(pooled);
    const auto scaling = all_scaling(families, o);
    report_inputs in;
    in.results = &rs;
    in.rows = &rows;
    in.scaling = &scaling;
    in.pooled = &pooled;
    in.notes = resource_notes(pooled);
    const auto models = fit_family_models(families, o, in.model_refusals);
    in.models = &models;
    const crossover_result crossover = find_crossovers(pooled, crossover_opts(o));
    in.crossover = &crossover;
    const auto studies = fit_study_models(pooled, {}, o.bootstrap, o.seed, o.level);
    in.study_models = &studies;
    // The crossover map at scale on assumed hardware (built-in H100 unless --hardware).
    const auto map = predict::report_map(pooled, hw);
    if (map)
        in.predict_map = &*map;
    in.settings = fmt::format("confidence {:g}, bootstrap {} replicates (seed {}), outliers {}",
                              o.level, o.bootstrap, o.seed, o.remove_outliers ? "removed" : "kept");
    const auto pngs = write_report(in, {o.out_dir, o.max_heatmaps, o.family_plots});
    out << fmt::format("wrote {}/report.md and {} plot(s): {}\n", o.out_dir, pngs.size(),
                       fmt::join(pngs, " "));
    return 0;
}

} // namespace

std::vector<family_model> fit_family_models(const std::vector<family>& families,
                                            const cli_options& o,
                                            std::vector<std::string>& refusals) {
    std::vector<family_model> out;
    for (const family& f : families) {
        if (f.members.size() < 3) {
            refusals.push_back(fmt::format("{}: not modelled, {} distinct P (need at least 3)",
                                           f.label, f.members.size()));
            continue;
        }
        family_model m;
        m.label = f.label;
        std::vector<std::vector<double>> samples;
        for (const pooled_case* c : f.members) {
            samples.push_back(c->steps());
            std::vector<double> s = samples.back();
            m.p.push_back(c->world_size);
            m.t.push_back(median_inplace(s));
        }
        // Work per rank falls as 1/p in strong scaling and stays put in weak scaling: a
        // model falling faster is not physical (model.hpp).
        const double min_e = f.scaling == "weak" ? weak_elasticity : strong_elasticity;
        m.fit = select_model(m.p, m.t, min_e);
        if (!o.predict.empty())
            m.predictions = predict_with_band(m.p, samples, m.fit, o.predict, o.bootstrap, o.seed,
                                              o.level, min_e);
        out.push_back(std::move(m));
    }
    return out;
}

int run_command(const cli_options& o, std::ostream& out) {
    if (o.command == "predict")
        return predict::run_predict(o, out);
    if (o.command == "compare")
        return cmd_compare(o, out);
    if (o.command == "report")
        return cmd_report(o, out);
    if (o.command == "export") { // before anything is read: an export never replaces results
        std::vector<std::string> ignored;
        const auto files = expand_inputs(o.inputs, ignored);
        for (const std::string* path : {&o.csv_path, &o.json_path})
            if (!path->empty())
                refuse_overwriting_results(*path, files);
    }
    const result_set rs = load(o.inputs, o);
    if (o.command == "profile") {
        const table t = profile_table(rs.cases);
        if (t.rows.empty())
            throw config_error("no case has a profile (run train_step with --profile on)");
        print_tables(out, o.format, {{"profile", t}});
        return 0;
    }
    const auto pooled = pool_cases(rs.cases, o.pool_resources);
    for (const std::string& line : resource_notes(pooled))
        note(line);
    if (o.command == "summary" || o.command == "export") {
        const auto rows = summarize_all(pooled, summary_opts(o));
        warn_rejected(rows, o.strict);
        warn_mfu(rows);
        if (o.command == "summary") {
            print_tables(out, o.format, {{"cases", summary_table(rows)}});
            return 0;
        }
        if (!o.csv_path.empty())
            write_to(o.csv_path, [&](std::ostream& s) { write_long_csv(rs.cases, s); });
        if (!o.json_path.empty())
            write_to(o.json_path,
                     [&](std::ostream& s) { s << json_text(summaries_json(rows)) << "\n"; });
        return 0;
    }
    if (o.command == "crossover") {
        const crossover_result r = find_crossovers(pooled, crossover_opts(o));
        if (r.cells.empty())
            throw config_error("no (S, P) with two or more attention schemes "
                               "(ring_attention, context_parallel) measured");
        print_tables(out, o.format,
                     {{"fastest scheme", crossover_cell_table(r)},
                      {"crossovers", crossover_point_table(r)}});
        note_crossover_noise(r);
        return 0;
    }
    const auto families = find_families(pooled);
    if (o.command == "scaling") {
        const auto results = all_scaling(families, o);
        if (results.empty())
            throw config_error("no family of cases differing only in P has two or more P");
        print_tables(out, o.format, {{"scaling", scaling_table(results)}});
        note_iteration_level(results, o);
        return 0;
    }
    std::vector<std::string> refusals;
    const auto models = fit_family_models(families, o, refusals);
    std::vector<point2> at;
    for (const auto& [p, s] : o.predict_ps)
        at.push_back({p, s});
    const auto studies = fit_study_models(pooled, at, o.bootstrap, o.seed, o.level);
    for (const auto& r : refusals)
        note(r);
    if (models.empty() && studies.empty())
        throw config_error("no family has at least 3 distinct P: nothing to model");
    if (!at.empty() && studies.empty())
        throw config_error("--predict p=..,S=..: no group of cases has 3 or more distinct P "
                           "and S to model t(p, S)");
    std::vector<std::pair<std::string, table>> tables;
    if (!models.empty())
        tables.emplace_back("models", model_table(models));
    if (!o.predict.empty())
        tables.emplace_back("predictions", prediction_table(models));
    if (!studies.empty())
        tables.emplace_back("models of p and S", study_model_table(studies));
    if (!at.empty())
        tables.emplace_back("predictions of p and S", study_prediction_table(studies));
    print_tables(out, o.format, tables);
    return 0;
}

} // namespace ringscale::analysis
