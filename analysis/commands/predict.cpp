#include "predict.hpp"

#include "analysis/cases/case_decision.hpp"
#include "analysis/predict/map.hpp"
#include "analysis/predict/stability.hpp"
#include "analysis/predict/tables.hpp"
#include "analysis/reading/reader.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <set>

namespace ringscale::analysis::predict {

namespace {

/// Notes while a long bootstrap runs (--bootstrap 1000000 runs for minutes): its expected time
/// once it is known to pass 10 s, then every 10 s how far.
replicate_progress progress_notes(std::size_t total) {
    return [total, told = false, next_s = 0.0](std::size_t done, double s) mutable {
        if (s < 1 || done == 0)
            return;
        const double each_s = s / static_cast<double>(done);
        const double left_s = each_s * static_cast<double>(total - done);
        if (!told && s + left_s > 10) {
            note(fmt::format("--bootstrap {}: about {:.0f} s of calibration refits ({:.1f} ms "
                             "each); fewer replicates are faster",
                             total, s + left_s, 1e3 * each_s));
            told = true;
            next_s = s + 10;
        } else if (told && s >= next_s && done < total) {
            note(fmt::format("--bootstrap: {} of {} replicates, about {:.0f} s left", done, total,
                             left_s));
            next_s = s + 10;
        }
    };
}

/// What CALIB's marks do to the calibration: the marked launches stay and their
/// median estimated effect on their whole time widens every band (mark_factor); with
/// --skip-marked they leave, and the cases left with none are named (left_out).
struct calibration_marks {
    std::vector<pooled_case> pooled;
    double mark_factor = 1;
    std::string left_out;
};

calibration_marks kept_or_skipped(const std::vector<pooled_case>& pooled, bool skip) {
    calibration_marks out;
    std::vector<double> factors;
    std::size_t launches = 0, cases = 0, whole = 0, unbounded = 0;
    std::string first;
    for (const pooled_case& p : pooled) {
        const pooled_case clean = without_marked(p);
        const std::size_t marked = p.launches.size() - clean.launches.size();
        out.pooled.push_back(skip ? clean : p);
        if (marked == 0)
            continue;
        launches += marked;
        ++cases;
        whole += clean.launches.empty();
        if (first.empty())
            first = fmt::format("{} P={}: {}", p.label(), p.world_size, marks_text(p, true));
        for (const case_data* c : p.launches) {
            double f = 1;
            for (const machine::mark_effect& e : launch_effects(*c))
                f = std::max(f, whole_time_effect(*c, e).factor);
            if (std::isfinite(f) && f > 1)
                factors.push_back(f);
            unbounded += !std::isfinite(f);
        }
    }
    if (launches == 0)
        return out;
    if (skip) {
        if (whole > 0)
            out.left_out = fmt::format("--skip-marked left out {} marked case(s) entirely, first "
                                       "{}",
                                       whole, first);
        note(fmt::format("--skip-marked: {} marked launch(es) of {} case(s) left out of the "
                         "calibration ({} case(s) entirely): measured on a contended machine or "
                         "while the sentinel drifted (first: {})",
                         launches, cases, whole, first));
        return out;
    }
    // What the figures cannot carry is how much the machine's state varied between the
    // calibration's launches (a load every launch shared is in the figures): half the range
    // from the 10th to the 90th percentile of the launches' effects, unmarked ones 1. The
    // absolute median effect gave 209x bands at load 15 (tests/bench/predict_load.sh, work).
    std::size_t all = 0;
    for (const pooled_case& p : pooled)
        all += p.launches.size();
    factors.resize(std::max(all, factors.size()), 1.0);
    std::sort(factors.begin(), factors.end());
    const auto at = [&](double q) {
        return factors[static_cast<std::size_t>(q * static_cast<double>(factors.size() - 1))];
    };
    out.mark_factor = factors.empty() ? 1.0 : std::sqrt(at(0.9) / at(0.1));
    note(fmt::format("{} launch(es) of {} case(s) in CALIB are marked as measured on a contended "
                     "machine or while the sentinel drifted (first: {}): kept, and the spread of "
                     "their estimated effects over CALIB's launches, x{:.2f} (half the 10-90% "
                     "range), widens every band{}; --skip-marked leaves them out",
                     launches, cases, first, out.mark_factor,
                     unbounded ? fmt::format(" ({} launch(es) with an effect that cannot be "
                                             "estimated are not in that figure)",
                                             unbounded)
                               : ""));
    return out;
}

/// One target per distinct case (identity without P); collectives only when --at asks for
/// one of their fields.
std::vector<target> templates(const std::vector<pooled_case>& pooled,
                              const std::vector<at_field>& at) {
    bool collectives = false;
    for (const at_field& f : at)
        collectives = collectives || f.name == "op" || f.name == "requested_bytes" ||
                      f.name == "scope" || f.name == "inplace" || f.name == "root" ||
                      f.name == "shift";
    std::set<std::string> seen;
    std::vector<target> out;
    for (const pooled_case& c : pooled) {
        if (c.launches.empty() || (c.job == "collectives") != collectives)
            continue;
        if (seen.insert(c.label()).second)
            out.push_back(target_of(c));
    }
    return out;
}

struct outputs {
    std::vector<std::pair<std::string, table>> tables;
    std::string last_line;
};

void print(const outputs& o, output_format format, std::ostream& out) {
    if (format == output_format::json) {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [name, t] : o.tables)
            j[name] = to_json(t);
        if (!o.last_line.empty())
            j["summary"] = o.last_line;
        out << j.dump(2) << "\n";
        return;
    }
    for (std::size_t i = 0; i < o.tables.size(); ++i) {
        if (format != output_format::csv)
            out << (i ? "\n" : "") << o.tables[i].first << ":\n";
        out << render(o.tables[i].second, format);
    }
    if (!o.last_line.empty())
        out << o.last_line << "\n";
}

/// One note naming the predictions whose ranks share cores more than CALIB's did.
void note_unseen_sharing(const std::vector<predicted>& rows) {
    std::set<int> ps;
    for (const predicted& p : rows)
        if (p.unseen_sharing)
            ps.insert(p.t.where.world);
    if (!ps.empty())
        note(fmt::format("P={}: their CPU ranks share cores, more than any CALIB case's did, a "
                         "regime leave-one-P-out cannot measure: their bands take a second draw "
                         "of the model's error (wider); calibrate with ranks sharing cores to "
                         "narrow them",
                         fmt::join(ps, ",")));
}

/// The cases of `held` that are not cases of `calib` (the same launch and case key): a case
/// predicted from a calibration that holds it is an in-sample figure, not a validation. One
/// note when any is left out; config_error when none is left.
std::vector<case_data> held_out_only(const result_set& held, const result_set& calib) {
    const auto key = [](const case_data& c) {
        return (c.file ? c.file->launch : std::string()) + "\n" + case_key(c);
    };
    std::set<std::string> in_calib;
    for (const case_data& c : calib.cases)
        in_calib.insert(key(c));
    std::vector<case_data> out;
    for (const case_data& c : held.cases)
        if (!in_calib.count(key(c)))
            out.push_back(c);
    const std::size_t dropped = held.cases.size() - out.size();
    if (dropped > 0 && out.empty())
        throw config_error(fmt::format("--validate: all {} held-out case(s) are calibration cases "
                                       "(the same launch and case in CALIB): nothing is held out; "
                                       "give results of launches CALIB does not hold",
                                       dropped));
    if (dropped > 0)
        note(fmt::format("--validate: {} of {} held-out case(s) are also calibration cases (the "
                         "same launch and case in CALIB) and are left out: predicted from "
                         "themselves, they would be in-sample figures, not a validation",
                         dropped, held.cases.size()));
    return out;
}

/// HELDOUT's cases that CALIB does not hold; config_error when there are none. Checked before
/// the calibration, whose bootstrap can take a while, so such input fails at once.
std::vector<case_data> held_out_cases(const predict_options& o, const result_set& held,
                                      const result_set& calib) {
    if (held.cases.empty())
        throw config_error(
            fmt::format("--validate: no results cases in {}", fmt::join(o.validate_inputs, " ")));
    return held_out_only(held, calib);
}

/// Validation of the held-out cases (those of HELDOUT that CALIB does not hold), from CALIB
/// alone.
void validate(const std::vector<case_data>& held_cases, const predict_options& o,
              const figure_source& src, const model_error& err, outputs& res) {
    const std::vector<pooled_case> pooled = pool_cases(held_cases);
    // A held-out case is measured on its unmarked launches; one with none is shown, marked,
    // and left out of the figures (the contamination it would add is the machine's).
    std::vector<pooled_case> unmarked;
    unmarked.reserve(pooled.size());
    std::vector<target> targets;
    std::vector<std::string> marks;
    for (const pooled_case& c : pooled) {
        if (c.launches.empty())
            continue;
        unmarked.push_back(without_marked(c));
        const bool all_marked = unmarked.back().launches.empty();
        targets.push_back(target_of(all_marked ? c : unmarked.back()));
        marks.push_back(all_marked ? marks_text(c) : "");
    }
    if (targets.empty())
        throw config_error("--validate: no held-out case has status ok");
    auto rows = predict_all(targets, src, err, o.level, o.seed + 1);
    note_unseen_sharing(rows);
    for (std::size_t i = 0; i < rows.size(); ++i)
        rows[i].mark = marks[i];
    validation_summary sum;
    res.tables.emplace_back("validation", validation_table(rows, o.level, sum));
    res.tables.emplace_back("memory per rank: measured peak against the formula",
                            memory_table(rows));
    if (sum.cases == 0 && sum.marked == 0)
        throw config_error("--validate: no held-out case could be predicted (see the notes)");
    res.last_line = summary_line(sum, o.level);
}

/// One note when the figures fitted on different launch rounds of CALIB disagree beyond their
/// bands (stability.hpp). 200 replicates a round: enough for 90-95% bands, and cheap.
void note_unstable(const calibration_set& set, const predict_options& o) {
    const std::vector<std::string> lines =
        unstable_figures(set, std::min<std::size_t>(o.bootstrap, 200), o.level, o.seed + 7);
    if (!lines.empty())
        note(fmt::format("the calibration is unstable across launches: {} figure(s) fitted on "
                         "different launch rounds of CALIB (the k-th launch of every case) "
                         "disagree beyond their {:g}% bands, so the machine's state moved "
                         "between them and predictions from CALIB carry it: {}",
                         lines.size(), 100 * o.level, fmt::join(lines, "; ")));
}

} // namespace

int run_predict(const predict_options& o, std::ostream& out) {
    const std::vector<at_field> at = o.at.empty() ? std::vector<at_field>{} : parse_at(o.at);
    std::unique_ptr<hardware_profile> hw;
    if (!o.hardware.empty())
        hw = std::make_unique<hardware_profile>(load_hardware(o.hardware));
    const result_set calib = load(o.inputs, o.strict);
    // HELDOUT stays loaded to the end: its cases point into it.
    const result_set held =
        o.validate_inputs.empty() ? result_set{} : load_results(o.validate_inputs, o.strict);
    const std::vector<case_data> held_cases =
        o.validate_inputs.empty() ? std::vector<case_data>{} : held_out_cases(o, held, calib);
    const calibration_marks marks = kept_or_skipped(pool_cases(calib.cases), o.skip_marked);
    const std::vector<pooled_case>& pooled = marks.pooled;
    const calibration_set set = gather_calibration(pooled);
    for (const std::string& n : set.notes)
        note(n);
    std::vector<double> cy, ly;
    observation_medians(set, cy, ly);
    const calibration point = fit_calibration(set, cy, ly);
    const std::vector<calibration> reps =
        hw ? std::vector<calibration>{}
           : bootstrap_calibrations(set, o.bootstrap, o.seed, progress_notes(o.bootstrap));
    const model_error err = calibration_error(set, point, cy, ly);
    if (!hw)
        note_unstable(set, o);
    figure_source src;
    src.point = &point;
    src.replicates = &reps;
    src.hardware = hw.get();
    src.mark_factor = marks.mark_factor;
    src.left_out = marks.left_out;
    outputs res;
    res.tables.emplace_back("figures", figures_table(point, reps, hw.get(), err, o.level));
    if (hw)
        note(describe(*hw));
    if (!at.empty()) {
        const std::vector<target> tpl = templates(pooled, at);
        if (tpl.empty())
            throw config_error("--at: CALIB has no case to start from");
        const auto rows = predict_all(expand_at(tpl, at, hw.get()), src, err, o.level, o.seed);
        note_unseen_sharing(rows);
        res.tables.emplace_back("predictions", prediction_table(rows, hw.get(), o.level));
    }
    if (o.map) {
        const hardware_profile map_hw = hw ? *hw : builtin_h100();
        const crossover_map m = build_map(set.cases, at, map_hw);
        if (!m.refusal.empty())
            throw config_error("--map: " + m.refusal);
        if (!hw)
            note(describe(map_hw) + " (the map's hardware; --hardware changes it)");
        res.tables.emplace_back("crossover map at scale", map_table(m));
    }
    if (!o.validate_inputs.empty())
        validate(held_cases, o, src, err, res);
    if (at.empty() && o.validate_inputs.empty() && !o.map) { // how well the model fits CALIB
        const auto rows = predict_all(set.cases, src, err, o.level, o.seed);
        validation_summary sum;
        res.tables.emplace_back("calibration cases (in sample)",
                                validation_table(rows, o.level, sum));
        res.tables.emplace_back("memory per rank: measured peak against the formula",
                                memory_table(rows));
        if (sum.cases > 0)
            res.last_line = "in sample: " + summary_line(sum, o.level);
    }
    print(res, o.format, out);
    return 0;
}

} // namespace ringscale::analysis::predict

namespace ringscale::analysis {

namespace {

struct predict_command final : subcommand {
    const char* name() const override { return "predict"; }
    const char* arguments() const override { return "CALIB... [--validate HELDOUT...]"; }
    const char* help() const override {
        return "A cost model of every job and scheme calibrated on CALIB (compute rate from "
               "compute_s, alpha/beta per link level from collectives): predictions at --at "
               "with bands and the dominant figure, --validate on held-out cases, --map of the "
               "fastest scheme at scale, --hardware what-ifs.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_opt);
        declare_bootstrap(d, m_opt.bootstrap, m_opt.seed);
        // Accepted as before and not used: the calibration keeps launches of other threads
        // or cores apart (pool_cases' default).
        declare_pool_resources(d, m_pool_resources);
        d.add_options()("at", po::value<std::string>(&m_opt.at),
                        "predict at these identity fields, e.g. 'nodes=64,ranks_per_node=8,"
                        "seq_len=1M' (a bare item adds a value: 'nodes=1,2,4' sweeps)")(
            "validate", po::value<std::vector<std::string>>(&m_opt.validate_inputs)->multitoken(),
            "held-out results: predict each case from CALIB alone; last line: median |error| "
            "and band coverage")("map", po::bool_switch(&m_opt.map),
                                 "crossover map of the attention schemes up to P=4096, S=10M");
        declare_marked(d, m_opt.skip_marked);
        declare_hardware(d, m_opt.hardware);
    }
    void finish(const po::variables_map& vm, std::vector<std::string> args) override {
        if (vm["confidence"].defaulted())
            m_opt.level = 0.9; // a 90% band: the validation's coverage target
        take_inputs(name(), std::move(args), m_opt);
    }
    int run(std::ostream& out) const override { return predict::run_predict(m_opt, out); }

    predict::predict_options m_opt;
    bool m_pool_resources = false;
};

} // namespace

RINGSCALE_STATS_FACTORY(predict, predict_command)

} // namespace ringscale::analysis
