#include "shared.hpp"

#include "option_ranges.hpp"

#include "analysis/models/model.hpp"
#include "analysis/statistics/bootstrap.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

/// A notifier storing a rate option in `to` once it lies in its range.
auto rate_into(const char* option, std::optional<double>& to) {
    return [option, &to](double v) { to = in_range(option, v, positive_rate); };
}

} // namespace

void declare_common(po::options_description& d, common_options& c, bool format) {
    d.add_options()("strict", po::bool_switch(&c.strict),
                    "fail (exit 2) on any unreadable file or case")(
        "remove-outliers", po::bool_switch(&c.remove_outliers),
        "drop Tukey outliers (1.5 IQR) before the statistics (the count is shown either way)")(
        "peak-gflops",
        po::value<double>()->notifier(rate_into("peak-gflops", c.limits.peak_gflops)),
        "peak GFLOP/s per rank for the sanity gate")(
        "link-gbs", po::value<double>()->notifier(rate_into("link-gbs", c.limits.link_gbs)),
        "link rate in GB/s per rank for the sanity gate")(
        "peak", po::value<double>()->notifier(rate_into("peak", c.limits.peak_tflops)),
        "dense peak TFLOP/s per rank for MFU (default: the device's from a built-in table)")(
        "confidence",
        po::value<double>(&c.level)->default_value(0.95, "0.95")->notifier([](double level) {
            RINGSCALE_REQUIRE(level > 0 && level < 1, "--confidence must be in (0, 1)");
        }),
        "confidence level");
    if (format)
        d.add_options()("format",
                        po::value<std::string>()->default_value("text")->notifier(
                            [&c](const std::string& name) { c.format = parse_format(name); }),
                        "output: text, md, csv or json");
}

void take_inputs(const char* name, std::vector<std::string> args, common_options& c) {
    RINGSCALE_REQUIRE(!args.empty(), fmt::format("{}: no input files given", name));
    c.inputs = std::move(args);
}

void declare_bootstrap(po::options_description& d, std::size_t& replicates, std::uint64_t& seed) {
    // Unsigned options parse "-1" as a huge count: bound them to what a study can use.
    d.add_options()("bootstrap",
                    po::value<std::size_t>(&replicates)->default_value(2000)->notifier([](auto n) {
                        RINGSCALE_REQUIRE(n >= 100, "--bootstrap must be at least 100 replicates");
                        RINGSCALE_REQUIRE(n <= max_bootstrap,
                                          fmt::format("--bootstrap must be between 100 and {} "
                                                      "replicates",
                                                      max_bootstrap));
                    }),
                    "bootstrap replicates")(
        "seed", po::value<std::uint64_t>(&seed)->default_value(1), "bootstrap seed");
}

void declare_min_launches(po::options_description& d, std::size_t& launches, const char* help) {
    d.add_options()("min-launches",
                    po::value<std::size_t>(&launches)->default_value(2)->notifier([](auto n) {
                        RINGSCALE_REQUIRE(n >= 2, "--min-launches must be at least 2 (one launch "
                                                  "says nothing about launch-to-launch noise)");
                        RINGSCALE_REQUIRE(n <= 1000000, "--min-launches must be at most 1000000");
                    }),
                    help);
}

void declare_base_p(po::options_description& d, std::optional<int>& base_p, std::size_t& launches) {
    d.add_options()("base-p", po::value<int>()->notifier([&base_p](int p) {
        base_p = static_cast<int>(in_range("base-p", p, rank_count));
    }),
                    "P of the base case (default: smallest P)");
    declare_min_launches(d, launches,
                         "resample launches, then iterations within them, when a case and its "
                         "base both have this many launches (at least 2); fewer: CIs cover "
                         "iteration noise only");
}

void declare_tie_floor(po::options_description& d, double& fraction) {
    d.add_options()("tie-floor",
                    po::value<double>()->default_value(1.0, "1%")->notifier([&fraction](double p) {
                        fraction = in_range("tie-floor", p, threshold_percent) / 100.0;
                    }),
                    "least noise between cases, in percent: a margin must clear it (raised to "
                    "the median spread between layouts of one scheme at P=1, identical work, "
                    "where measured)");
}

void declare_pool_resources(po::options_description& d, bool& pool) {
    d.add_options()("pool-resources", po::bool_switch(&pool),
                    "pool launches of a case that ran with different threads or CPU affinity "
                    "(default: kept apart, each labelled with its threads/cores)");
}

void declare_hardware(po::options_description& d, std::string& hardware) {
    d.add_options()("hardware", po::value<std::string>(&hardware),
                    "assumed hardware: h100 (built-in: H100 SXM, NVLink, 400 Gb/s InfiniBand) "
                    "or a profile file (report: its crossover map is drawn only when --hardware is "
                    "given)");
}

void declare_marked(po::options_description& d, bool& skip_marked) {
    d.add_options()("skip-marked", po::bool_switch(&skip_marked),
                    "leave out launches marked as measured on a contended machine or while the "
                    "sentinel drifted (by default they stay, and weigh by their estimated effect: "
                    "DESIGN.md, 'One decision rule')")(
        "keep-marked", po::bool_switch()->notifier([](bool on) {
            if (on)
                note("--keep-marked: marked launches are kept by default and weigh by their "
                     "estimated effect (--skip-marked leaves them out)");
        }),
        "accepted: marked launches are kept by default");
}

void note(const std::string& line) {
    std::fprintf(stderr, "ringscale-stats: %s\n", terminal_text(line).c_str());
}

result_set load(const std::vector<std::string>& inputs, bool strict) {
    result_set rs = load_results(inputs, strict);
    if (rs.cases.empty())
        throw config_error(fmt::format("no results cases found in {}", fmt::join(inputs, " ")));
    return rs;
}

std::vector<pooled_case> pool_with_notes(const result_set& rs, bool pool_resources) {
    std::vector<pooled_case> pooled = pool_cases(rs.cases, pool_resources);
    for (const std::string& line : resource_notes(pooled))
        note(line);
    return pooled;
}

std::vector<case_summary> summarize_with_notes(const std::vector<pooled_case>& pooled,
                                               const common_options& c) {
    const auto rows = summarize_all(pooled, {c.remove_outliers, c.level, c.limits});
    std::size_t noop = 0;
    for (const auto& s : rows)
        noop += s.flags.count("busbw_gbs") && s.flags.at("busbw_gbs") == "no-op";
    if (noop > 0)
        note(fmt::format("{} collectives case(s) at P=1: {}", noop, noop_reason("collectives", 1)));
    for (const auto& s : rows)
        for (const auto& r : s.rejected) {
            if (c.strict)
                throw config_error(r);
            note(r);
        }
    std::vector<std::string> seen; // one note per distinct reason a GPU case has no MFU
    for (const auto& s : rows)
        if (!s.mfu_note.empty() && std::find(seen.begin(), seen.end(), s.mfu_note) == seen.end()) {
            seen.push_back(s.mfu_note);
            note(s.mfu_note);
        }
    return rows;
}

std::vector<scaling_result> scale_families(const std::vector<family>& families,
                                           const scaling_options& opt) {
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
        if (auto r = analyse_scaling(f, opt))
            out.push_back(*r);
        else
            note(fmt::format("family {}: no case at base P={}", f.label, opt.base_p.value_or(0)));
    }
    if (refused > 1)
        note(fmt::format("... and so for all {} collectives families", refused));
    return out;
}

std::vector<family_model> fit_family_models(const std::vector<family>& families,
                                            const std::vector<double>& at_p, std::size_t replicates,
                                            std::uint64_t seed, double level,
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
        if (!at_p.empty())
            m.predictions =
                predict_with_band(m.p, samples, m.fit, at_p, replicates, seed, level, min_e);
        out.push_back(std::move(m));
    }
    return out;
}

void print_tables(std::ostream& out, output_format format,
                  const std::vector<std::pair<std::string, table>>& tables) {
    if (format == output_format::json) {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [name, t] : tables)
            j[name] = to_json(t);
        out << json_text(j) << "\n";
        return;
    }
    for (std::size_t i = 0; i < tables.size(); ++i)
        out << (i ? "\n" : "") << render(tables[i].second, format);
}

} // namespace ringscale::analysis
