#include "report.hpp"

#include "table_fit.hpp"

#include "accuracy_report.hpp"
#include "analysis/measures/resources.hpp"
#include "crossover_report.hpp"
#include "history_report.hpp"
#include "html_page.hpp"
#include "numerics_report.hpp"
#include "plots.hpp"
#include "question_plots.hpp"
#include "report_model.hpp"
#include "report_summary.hpp"
#include "src/base/error.hpp"
#include "src/base/machine_marks.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/text_escape.hpp"
#include "src/base/whole_file.hpp"
#include "timeline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <set>

namespace ringscale::analysis {

namespace {

const char* methodology =
    "## Method\n\n"
    "- An iteration's time is its slowest rank's `time_s`; warm-up iterations are excluded.\n"
    "- Launches of the same case (same job, variant and parameters) are pooled as repetitions.\n"
    "- Median with a distribution-free 95% CI from Binomial(n, 1/2) order-statistic ranks (Le "
    "Boudec 2010; Hoefler & Belli, SC15); no CI for n < 6.\n"
    "- Launches that ran one case with different threads or CPU cores are kept apart (labelled "
    "[threads=T cores=C]) unless --pool-resources.\n"
    "- Percentiles by linear interpolation (Hyndman-Fan type 7, as numpy); CV = sample sd / mean. "
    "Outliers: Tukey fences at 1.5 IQR, counted, removed only with --remove-outliers.\n"
    "- Time imbalance = slowest / mean of per-rank median times, per launch; over launches the "
    "median of the per-launch values (the live table's work imbalance is another figure: the "
    "largest rank's visible pairs over the mean). comm % = sum comm_wait_s / sum time_s over ranks "
    "and iterations.\n"
    "- Throughput at the median time: GFLOP/s per rank = flops_per_iter / time / P (attention "
    "FLOPs: forward 4·B·S²·H·D, halved for causal; backward 2.5x forward); algbw = bytes / time, "
    "busbw = algbw x busbw_factor (nccl-tests convention). Figures above a device's peak or a "
    "link/memory ceiling (a table by device, or --link-gbs, --peak-gflops) are withheld and shown "
    "as 'impossible' (sanity gate, on by default); collectives at P=1 move nothing and are not "
    "rated ('no-op'). MFU = GFLOP/s per rank as % of the device's dense peak for the case's dtype "
    "(vendor datasheets, no sparsity: H100 SXM/PCIe/NVL, H200, A100, L40S; bf16, fp16, tf32, "
    "fp32), or of --peak.\n"
    "- Scaling: strong E = T0·p0 / (p·Tp), weak E = T0 / Tp against the stated base P0; "
    "percentile-bootstrap CIs, two-level where both cases have two or more launches (launches, "
    "then iterations within them; `--repeat` repetitions count as launches), else over iterations "
    "only (launch-to-launch noise unknown); Karp-Flatt e = (1/S - 1/p) / (1 - 1/p) with p relative "
    "to P0, flagged (!) outside [0, 1]; collectives get no scaling arithmetic (a fixed message "
    "does not split among ranks).\n"
    "- Crossovers: a fastest scheme or a crossing is confirmed only when the CI of the time ratio, "
    "resampling launches then iterations, clears 1 + a noise floor (at least 1%, or the median "
    "spread between layouts of one scheme at P=1 where larger) with two or more launches of each "
    "scheme; at P=1 every scheme does the same work and none is ranked.\n"
    "- Models: t(p) = c0 + c1·p^e·log2(p)^k (Extra-P normal form, one term), least squares, chosen "
    "by leave-one-out cross-validated SMAPE; at least 3 distinct P.\n\n";

/// One scaling plot (time and efficiency against P) per family whose label contains
/// `which` ("all": every family); the question plots cover every family either way.
void family_plots(const report_inputs& in, const std::string& which, const std::string& dir,
                  std::string& md, std::vector<std::string>& pngs) {
    if (which.empty())
        return;
    std::size_t i = 0;
    md += "\n### Scaling of single families (--family-plots)\n";
    for (const scaling_result& r : *in.scaling) {
        if (which != "all" && r.label.find(which) == std::string::npos)
            continue;
        const std::string stem = fmt::format("scaling_{:02}", ++i);
        plot_scaling(r, dir, stem);
        pngs.push_back(stem + ".png");
        md += fmt::format("\n**{}** ({} scaling, base P={})\n\n![{}]({}.png)\n",
                          markdown_text(r.label), markdown_text(r.scaling), r.base_p, stem, stem);
    }
    if (i == 0)
        md += fmt::format("\nNo family's label contains '{}'.\n", markdown_text(which));
}

void heatmaps(const report_inputs& in, const report_options& opt, const std::string& dir,
              std::string& md, std::vector<std::string>& pngs) {
    std::vector<const case_summary*> order;
    for (const case_summary& s : *in.rows)
        if (!s.source->launches.empty() && s.source->world_size > 1 && std::isfinite(s.imbalance))
            order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [](const case_summary* a, const case_summary* b) {
        return a->imbalance > b->imbalance;
    });
    // One case per job/variant: the sizes of one operation share its pattern, so six
    // heatmaps of one collective would repeat one picture.
    std::set<std::string> shown;
    order.erase(
        std::remove_if(order.begin(), order.end(),
                       [&](const case_summary* s) {
                           return !shown.insert(s->source->job + "/" + s->source->variant).second;
                       }),
        order.end());
    if (order.size() > opt.max_heatmaps)
        order.resize(opt.max_heatmaps);
    md += "\n## Per-rank heatmaps\n\nThe most imbalanced case (slowest / mean of per-rank "
          "medians) of each job and variant, the largest first, first launch of each. A bright "
          "row is a straggling rank; a gradient across ranks in compute_s is structural (e.g. "
          "causal) imbalance.\n";
    std::size_t i = 0;
    for (const case_summary* s : order) {
        const std::string stem = fmt::format("heatmap_{:02}", ++i);
        const std::string title = fmt::format("{} P={} (time imbalance {:.3f})", s->source->label(),
                                              s->source->world_size, s->imbalance);
        plot_heatmap(*s->source->launches.front(), title, dir, stem);
        pngs.push_back(stem + ".png");
        md += fmt::format("\n{}\n\n![{}]({}.png)\n", markdown_text(title), stem, stem);
    }
}

std::string inputs_section(const report_inputs& in) {
    std::string md =
        fmt::format("## Inputs\n\n{} file(s) read, {} case record(s). Settings: {}\n\n",
                    in.results->files.size(), in.results->cases.size(), in.settings);
    std::set<std::string> incomplete;
    for (const auto& c : in.results->cases)
        if (!c.file->complete)
            incomplete.insert(c.file->path);
    for (const auto& f : incomplete)
        md += fmt::format("- incomplete (interrupted launch): {}\n", markdown_text(f));
    for (const auto& p : in.results->problems)
        md += fmt::format("- problem: {}\n", markdown_text(p));
    for (const auto& n : in.results->notes)
        md += fmt::format("- note: {}\n", markdown_text(n));
    for (const auto& n : in.notes)
        md += fmt::format("- note: {}\n", markdown_text(n));
    return md;
}

/// What the machine did: the launcher's warnings, the drift sentinel's verdicts
/// and every case with marked launches, which never decide a regression, crossing or
/// calibration.
std::string machine_section(const report_inputs& in) {
    std::string md = "## Machine\n\n";
    std::set<std::string> seen;
    std::size_t probed = 0, drifted = 0;
    for (const case_data& c : in.results->cases) {
        if (!seen.insert(c.file->path).second)
            continue;
        const auto w = c.file->meta.find(schema::meta_attr::warnings);
        if (w != c.file->meta.end() && !w->second.text.empty())
            for (std::size_t at = 0; at < w->second.text.size();) {
                const std::size_t end =
                    std::min(w->second.text.find('\n', at), w->second.text.size());
                md += fmt::format("- launcher warning ({}): {}\n", markdown_text(c.file->path),
                                  markdown_text(w->second.text.substr(at, end - at)));
                at = end + 1;
            }
        probed += c.file->probes > 0;
        if (!c.file->drift.empty()) {
            ++drifted;
            md += fmt::format("- sentinel ({}): drifted: {}\n", markdown_text(c.file->path),
                              markdown_text(c.file->drift));
        }
    }
    md += fmt::format("- drift sentinel: {} of {} file(s) ran it, {} drifted beyond its "
                      "tolerance (compute {:g}x, allreduce {:g}x the launch's fastest probe)\n",
                      probed, seen.size(), drifted, machine::drift_tolerance_compute,
                      machine::drift_tolerance_allreduce);
    std::size_t marked = 0;
    if (in.pooled)
        for (const pooled_case& p : *in.pooled)
            if (const std::string m = marks_text(p, true); !m.empty()) {
                md += fmt::format("- marked: {} P={}: {}\n", markdown_text(p.label()), p.world_size,
                                  markdown_text(m));
                ++marked;
            }
    md += marked == 0 ? "\nNo case was measured on a contended machine or while the sentinel "
                        "drifted.\n"
                      : "\nA marked launch (other processes on the ranks' cores, stolen time, a "
                        "throttled or shared GPU, or a drifted sentinel around it) never decides "
                        "a regression, a crossing or a calibration; the tables say so where it "
                        "would have.\n";
    return md + "\n";
}

/// compare's verdicts of the study against --baseline: its table, as `compare`
/// prints it, and the cases only one side has.
std::string baseline_section(const comparison& cmp, const std::string& baseline) {
    std::size_t regressions = 0;
    for (const case_comparison& c : cmp.matched)
        regressions += c.result == verdict::regression;
    std::string md = fmt::format(
        "\n## Compared with the baseline\n\nThe study's cases against {} (as `ringscale-stats "
        "compare BASE NEW`: the change in % with a two-level bootstrap CI, p with Holm's "
        "adjustment, a regression only with two or more launches per side): {} matched, {} "
        "regression(s).\n\n",
        markdown_text(baseline), cmp.matched.size(), regressions);
    md += render(compare_table(cmp), output_format::md);
    for (const pooled_case* c : cmp.only_base)
        md += fmt::format("- only in the baseline: {} P={}\n", markdown_text(c->label()),
                          c->world_size);
    for (const pooled_case* c : cmp.only_new)
        md +=
            fmt::format("- only in the study: {} P={}\n", markdown_text(c->label()), c->world_size);
    return md;
}

/// report.md's text, its plots drawn into `dir` (their PNGs named in `pngs`).
std::string compose_report(const report_inputs& in, const report_options& opt,
                           const std::string& dir, std::vector<std::string>& pngs) {
    std::string md = "# ringscale scaling report\n\n" +
                     summary_section({in.crossover, in.scaling, in.history, in.pooled}) +
                     inputs_section(in) + "\n" + machine_section(in) + methodology;
    md += "## Summary\n\n" + render(summary_table(*in.rows), output_format::md);
    std::string rejected;
    for (const auto& s : *in.rows)
        for (const auto& r : s.rejected)
            rejected += "- " + markdown_text(r) + "\n";
    if (!rejected.empty())
        md += "\n### Withheld figures (sanity gate)\n\n" + rejected;
    std::set<std::string> mfu_notes;
    for (const auto& s : *in.rows)
        if (!s.mfu_note.empty() && mfu_notes.insert(s.mfu_note).second)
            md += (mfu_notes.size() == 1 ? "\n" : "") + ("- " + markdown_text(s.mfu_note) + "\n");
    const bool plots = have_gnuplot();
    if (!plots)
        md += "\n*gnuplot not found: plots were not drawn.*\n";
    md += "\n## Scaling\n\n";
    md += in.scaling->empty() ? std::string("No family with two or more P.\n")
                              : render(scaling_table(*in.scaling), output_format::md);
    md += "\nAn efficiency above 1.1 is marked suspect in the note column: superlinear scaling "
          "most often means the base case ran on fewer cores (its threads or the MPI launcher's "
          "CPU binding), which the note names where the files recorded them. An oversubscribed "
          "case (more threads than cores: ranks wait for a core) says so there too, with the "
          "efficiency it cannot pass, as do marked launches (see Machine).\n";
    const auto suspect = suspect_efficiencies(*in.scaling);
    if (!suspect.empty())
        md += "\n### Suspect efficiencies\n\n";
    for (const std::string& line : suspect)
        md += "- " + markdown_text(line) + "\n";
    if (plots && in.pooled) {
        md += "\n## The study's questions, one plot each\n\nEvery attention and training case "
              "is in one of these plots (collectives: Bus bandwidth below); error bars are the "
              "95% CI of the median over all iterations of all launches.\n";
        md += question_plots({in.pooled, in.rows, in.crossover}, dir, pngs);
        family_plots(in, opt.family_plots, dir, md, pngs);
    }
    md += "\n## Models\n\n";
    if (!in.models->empty())
        md += render(model_table(*in.models), output_format::md);
    for (const auto& r : in.model_refusals)
        md += "- " + markdown_text(r) + "\n";
    if (in.study_models && !in.study_models->empty())
        md += "\nTwo-parameter models t(p, S) of attention cases measured at 3 or more P and "
              "S:\n\n" +
              render(study_model_table(*in.study_models), output_format::md);
    if (in.compared)
        md += baseline_section(*in.compared, in.baseline);
    if (in.crossover)
        md += crossover_section(*in.crossover);
    if (in.accuracy)
        md += accuracy_section(*in.accuracy, dir, plots, pngs); // staged, as every plot
    if (in.numerics)
        md += numerics_section(*in.numerics, dir, plots, pngs);
    if (in.predict_map)
        md += predict::map_section(*in.predict_map, dir, plots, pngs);
    if (in.history)
        md += history_section(*in.history, opt.history_plots, dir, plots, pngs);
    if (plots) {
        const std::string bw = busbw_plots(*in.rows, dir, pngs);
        if (!bw.empty())
            md += "\n## Bus bandwidth\n" + bw;
    }
    if (plots && plot_breakdown(*in.rows, dir, "breakdown")) {
        pngs.push_back("breakdown.png");
        md += "\n## Compute vs exposed communication\n\nThe cases whose communication is "
              "least hidden, labelled in full; every other case with P > 1 is in the last bar "
              "(their mean). One rank has nothing to communicate and a collective is all "
              "communication: both are left out.\n\n"
              "![breakdown](breakdown.png)\n";
    }
    if (in.results) // --trace: one iteration per scheme, drawn by the page (timeline_svg.hpp)
        md += timeline_section(in.results->cases);
    md += "\n## Memory\n\nPeak memory per rank (max over ranks and launches) is in the "
          "Summary's MiB columns: host = buffers the job allocated, RSS = the process's peak "
          "resident set, device = GPU memory; params/grads/optimizer/activations/comm buffers are "
          "train_step's categories. The memory plots against P are with the questions above.\n";
    if (plots)
        heatmaps(in, opt, dir, md, pngs);
    return md;
}

} // namespace

std::vector<std::string> write_report(const report_inputs& in, const report_options& opt) {
    std::error_code ec;
    std::filesystem::create_directories(opt.dir, ec);
    if (ec)
        throw error(error_kind::io, fmt::format("cannot create {}: {}", opt.dir, ec.message()));
    // Every file goes into a staging directory inside opt.dir first and moves into place only
    // when all were written (report.md last): a full disk or a failed plot leaves nothing
    // partial, and a symlink at a destination is replaced, never written through.
    staged_files staged(opt.dir);
    std::vector<std::string> pngs;
    try {
        // One model, two renderings: report.md and report.html cannot drift apart.
        report_model model = read_report_model(compose_report(in, opt, staged.path(), pngs));
        model.history = in.history;
        if (in.results)
            model.timelines_html = timeline_html(in.results->cases);
        if (in.compared) // the rows of baseline_section's table, in its order
            for (const case_comparison& c : in.compared->matched)
                model.compared_keys.push_back(c.base->key);
        const std::string html = html_page(model, staged.path(), have_gnuplot());
        write_whole_file(staged.path() + "/report.html", [&](std::ostream& f) { f << html; });
        write_whole_file(staged.path() + "/report.md", [&](std::ostream& f) {
            // No control character from a file reaches whoever cats it; prose wraps at 100
            // columns, tables stay tables.
            f << terminal_lines(wrap_markdown_prose(markdown_of(model), 100));
        });
    } catch (const error& e) { // name the files where they were going, not the staging
        std::string why = e.what();
        for (auto at = why.find(staged.path()); at != std::string::npos;
             at = why.find(staged.path(), at))
            why.replace(at, staged.path().size(), opt.dir);
        throw error(e.kind(), why);
    }
    staged.publish("report.md");
    return pngs;
}

} // namespace ringscale::analysis
