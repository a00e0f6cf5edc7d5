#include "cli.hpp"

#include "option_ranges.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <sstream>

namespace ringscale::analysis {

namespace po = boost::program_options;

namespace {

const char* usage_line(const std::string& cmd) {
    if (cmd == "compare")
        return "ringscale-stats compare [options] BASE NEW";
    if (cmd == "report")
        return "ringscale-stats report [options] DIR INPUT...";
    if (cmd == "predict")
        return "ringscale-stats predict [options] CALIB... [--validate HELDOUT...]";
    return nullptr;
}

const char* purpose(const std::string& cmd) {
    if (cmd == "summary")
        return "One row per case: median step time with its 95% CI, percentiles, outliers, "
               "time imbalance (the median over launches of each launch's slowest / mean per-rank "
               "median), communication share, throughput, peak memory per rank and the machine "
               "marks (launches measured on a contended machine or while the drift sentinel "
               "drifted). Rates above the hardware's ceiling read 'impossible', collectives at "
               "P=1 'no-op'. CSV and JSON have the same columns whatever the data.";
    if (cmd == "scaling")
        return "Speedup, efficiency (bootstrap CIs) and Karp-Flatt serial fraction per family "
               "of cases differing only in P, against a base case; memory against P; an "
               "efficiency above 1.1 and a Karp-Flatt value outside [0, 1] are flagged; "
               "collectives are refused (busbw against P is their measure).";
    if (cmd == "model")
        return "Fit t(p) = c0 + c1*p^e*log2(p)^k per family (Extra-P normal form, LOO-CV "
               "selection) and t(p, S) per group of attention cases measured at 3+ P and S; "
               "--predict 8,64 or p=64,S=1M extrapolates with a bootstrap band.";
    if (cmd == "compare")
        return "Match cases between BASE and NEW; change in % with a two-level bootstrap CI "
               "(launches, then iterations) and p (Holm); a regression needs >= 2 launches per "
               "side; peak memory. Exit 0: no regression, 1: regression (time or memory), 2: "
               "error.";
    if (cmd == "crossover")
        return "Which attention scheme is fastest at each (S, P), its margin over the "
               "runner-up (bootstrap CI over launches, then iterations) and peak memory per rank "
               "beside it; where two schemes trade places along S at fixed P. A verdict is "
               "confirmed only with 2+ launches of each scheme and a CI clear of the noise "
               "between cases; at P=1 every scheme does the same work and none is ranked.";
    if (cmd == "export")
        return "Long-format CSV (case x iteration x rank) and JSON summaries.";
    if (cmd == "report")
        return "Write DIR/report.md and PNG plots (gnuplot).";
    if (cmd == "predict")
        return "A cost model of every job and scheme calibrated on CALIB (compute rate from "
               "compute_s, alpha/beta per link level from collectives): predictions at --at "
               "with bands and the dominant figure, --validate on held-out cases, --map of the "
               "fastest scheme at scale, --hardware what-ifs.";
    if (cmd == "profile")
        return "Where a step's time goes: per-operation time per step and % of step of "
               "train_step cases run with --profile on.";
    return nullptr;
}

void add_common(po::options_description& d, cli_options& o, std::string& format) {
    d.add_options()("help,h", "show this help")("strict", po::bool_switch(&o.strict),
                                                "fail (exit 2) on any unreadable file or case")(
        "remove-outliers", po::bool_switch(&o.remove_outliers),
        "drop Tukey outliers (1.5 IQR) before the statistics (the count is shown either way)")(
        "peak-gflops", po::value<double>(), "peak GFLOP/s per rank for the sanity gate")(
        "link-gbs", po::value<double>(), "link rate in GB/s per rank for the sanity gate")(
        "peak", po::value<double>(),
        "dense peak TFLOP/s per rank for MFU (default: the device's from a built-in table)")(
        "confidence", po::value<double>(&o.level)->default_value(0.95, "0.95"), "confidence level");
    (void)format;
}

void add_specific(const std::string& cmd, po::options_description& d, cli_options& o,
                  std::string& format, std::string& predict, std::string& threshold) {
    if (cmd != "export" && cmd != "report")
        d.add_options()("format", po::value<std::string>(&format)->default_value("text"),
                        "output: text, md, csv or json");
    if (cmd == "scaling" || cmd == "model" || cmd == "report" || cmd == "compare" ||
        cmd == "crossover" || cmd == "predict")
        d.add_options()("bootstrap", po::value<std::size_t>(&o.bootstrap)->default_value(2000),
                        "bootstrap replicates")(
            "seed", po::value<std::uint64_t>(&o.seed)->default_value(1), "bootstrap seed");
    if (cmd == "scaling" || cmd == "report")
        d.add_options()("base-p", po::value<int>(), "P of the base case (default: smallest P)")(
            "min-launches", po::value<std::size_t>(&o.min_launches)->default_value(2),
            "resample launches, then iterations within them, when a case and its base both "
            "have this many launches (at least 2); fewer: CIs cover iteration noise only");
    if (cmd == "model")
        d.add_options()("predict", po::value<std::string>(&predict),
                        "comma list of P to predict, e.g. 8,64,1024; or points of the "
                        "two-parameter models t(p, S), e.g. p=64,S=1M;p=128,S=2M");
    if (cmd == "compare")
        d.add_options()("threshold", po::value<std::string>(&threshold)->default_value("5%"),
                        "slowdown that counts as a regression, in percent")(
            "alpha", po::value<double>(&o.alpha)->default_value(0.05, "0.05"),
            "significance level (Holm-adjusted across cases)")(
            "min-launches", po::value<std::size_t>(&o.min_launches)->default_value(2),
            "launches per side (at least 2) needed to call a regression; the test is a "
            "two-level bootstrap (launches, then iterations); with fewer, a difference is "
            "'unconfirmed'");
    if (cmd == "export")
        d.add_options()("csv", po::value<std::string>(&o.csv_path),
                        "long-format CSV file ('-': stdout)")(
            "json", po::value<std::string>(&o.json_path), "JSON summaries file ('-': stdout)");
    if (cmd == "crossover")
        d.add_options()("min-launches", po::value<std::size_t>(&o.min_launches)->default_value(2),
                        "launches of each scheme (at least 2) needed to confirm a fastest "
                        "scheme or a crossing; the CIs resample launches, then iterations");
    if (cmd == "crossover" || cmd == "report")
        d.add_options()("tie-floor", po::value<double>(&o.tie_floor)->default_value(1.0, "1%"),
                        "least noise between cases, in percent: a margin must clear it (raised "
                        "to the median spread between layouts of one scheme at P=1, identical "
                        "work, where measured)");
    if (cmd != "compare" && cmd != "profile" && cmd != "export" && cmd != "model")
        d.add_options()("pool-resources", po::bool_switch(&o.pool_resources),
                        "pool launches of a case that ran with different threads or CPU "
                        "affinity (default: kept apart, each labelled with its threads/cores)");
    if (cmd == "predict")
        d.add_options()("at", po::value<std::string>(&o.at),
                        "predict at these identity fields, e.g. 'nodes=64,ranks_per_node=8,"
                        "seq_len=1M' (a bare item adds a value: 'nodes=1,2,4' sweeps)")(
            "validate", po::value<std::vector<std::string>>(&o.validate_inputs)->multitoken(),
            "held-out results: predict each case from CALIB alone; last line: median |error| "
            "and band coverage")("map", po::bool_switch(&o.map),
                                 "crossover map of the attention schemes up to P=4096, S=10M");
    if (cmd == "predict" || cmd == "report")
        d.add_options()("hardware", po::value<std::string>(&o.hardware),
                        "assumed hardware: h100 (built-in: H100 SXM, NVLink, 400 Gb/s "
                        "InfiniBand) or a profile file (report: the map's, default h100)");
    if (cmd == "report")
        d.add_options()("max-heatmaps", po::value<std::size_t>(&o.max_heatmaps)->default_value(6),
                        "heatmaps for the most imbalanced cases")(
            "family-plots", po::value<std::string>(&o.family_plots),
            "also draw one scaling plot per family whose label contains this text ('all': "
            "every family); the question plots cover every family either way");
}

/// "p=64,S=1M;p=8,S=128K" -> (64, 1048576), (8, 131072); config_error naming the item.
std::vector<std::pair<double, double>> parse_predict_points(const std::string& text) {
    std::vector<std::pair<double, double>> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(';', start), text.size());
        const std::string point = text.substr(start, end - start);
        std::optional<double> p, s;
        for (const auto& item : split_list(point, "predict")) {
            const auto eq = item.find('=');
            const std::string name = eq == std::string::npos ? "" : item.substr(0, eq);
            if (name == "p" || name == "P")
                p = in_range("predict p", parse_double(item.substr(eq + 1), "predict p"),
                             predict_ranks);
            else if (name == "S" || name == "s")
                s = in_range("predict S",
                             static_cast<double>(parse_size(item.substr(eq + 1), "predict S")),
                             predict_tokens);
            else
                throw config_error(fmt::format("--predict: '{}' is not p=N or S=N (write "
                                               "p=64,S=1M, points separated by ';')",
                                               item));
        }
        if (!p || !s)
            throw config_error(fmt::format(
                "--predict: '{}' needs both p (at least 1) and S, e.g. p=64,S=1M", point));
        out.emplace_back(*p, *s);
        start = end + 1;
    }
    return out;
}

void finish(const std::string& cmd, cli_options& o, const po::variables_map& vm,
            const std::string& predict, const std::string& threshold) {
    // Every number option has a declared range (option_ranges.hpp), NaN never inside it.
    if (vm.count("peak-gflops"))
        o.limits.peak_gflops =
            in_range("peak-gflops", vm["peak-gflops"].as<double>(), positive_rate);
    if (vm.count("peak"))
        o.limits.peak_tflops = in_range("peak", vm["peak"].as<double>(), positive_rate);
    if (vm.count("link-gbs"))
        o.limits.link_gbs = in_range("link-gbs", vm["link-gbs"].as<double>(), positive_rate);
    if (vm.count("tie-floor"))
        o.tie_floor = in_range("tie-floor", o.tie_floor, threshold_percent) / 100.0;
    if (vm.count("base-p"))
        o.base_p = static_cast<int>(in_range("base-p", vm["base-p"].as<int>(), rank_count));
    in_range("alpha", o.alpha, probability);
    if (cmd == "predict" && vm["confidence"].defaulted())
        o.level = 0.9; // a 90% band: the validation's coverage target
    RINGSCALE_REQUIRE(o.level > 0 && o.level < 1, "--confidence must be in (0, 1)");
    RINGSCALE_REQUIRE(o.min_launches >= 2, "--min-launches must be at least 2 (one launch says "
                                           "nothing about launch-to-launch noise)");
    RINGSCALE_REQUIRE(o.bootstrap >= 100, "--bootstrap must be at least 100 replicates");
    if (predict.find('=') != std::string::npos)
        o.predict_ps = parse_predict_points(predict);
    else if (!predict.empty())
        for (const auto& item : split_list(predict, "predict"))
            o.predict.push_back(in_range("predict", parse_double(item, "predict"), predict_ranks));
    if (!threshold.empty()) {
        std::string t = threshold;
        if (t.back() == '%')
            t.pop_back();
        o.threshold = parse_double(t, "threshold") / 100.0;
        RINGSCALE_REQUIRE(o.threshold >= 0, "--threshold must be a change of 0% or more");
        in_range("threshold", 100 * o.threshold, threshold_percent);
    }
    // Unsigned options parse "-1" as a huge count: bound them to what a study can use.
    RINGSCALE_REQUIRE(o.max_heatmaps <= 1000, "--max-heatmaps must be between 0 and 1000");
    RINGSCALE_REQUIRE(o.bootstrap >= 100 && o.bootstrap <= 1000000,
                      "--bootstrap must be between 100 and 1000000 replicates");
    RINGSCALE_REQUIRE(o.min_launches <= 1000000, "--min-launches must be at most 1000000");
    std::vector<std::string> pos = vm.count("inputs") ? vm["inputs"].as<std::vector<std::string>>()
                                                      : std::vector<std::string>{};
    if (cmd == "compare") {
        RINGSCALE_REQUIRE(pos.size() == 2, "compare needs exactly two inputs: BASE NEW");
        o.base_input = pos[0];
        o.new_input = pos[1];
        return;
    }
    if (cmd == "report") {
        RINGSCALE_REQUIRE(!pos.empty(), "report needs an output directory: report DIR INPUT...");
        o.out_dir = pos.front();
        pos.erase(pos.begin());
    }
    if (cmd == "export")
        RINGSCALE_REQUIRE(!o.csv_path.empty() || !o.json_path.empty(),
                          "export needs --csv FILE and/or --json FILE");
    RINGSCALE_REQUIRE(!pos.empty(), fmt::format("{}: no input files given", cmd));
    o.inputs = pos;
}

} // namespace

std::string tool_help() {
    std::string s = "ringscale-stats: offline statistics for ringscale results files "
                    "(schema ringscale/2; ringscale/1 still read).\n\n"
                    "usage: ringscale-stats COMMAND [options] INPUT...\n"
                    "INPUT: files, directories (searched recursively for *.h5, *.h5.part) or "
                    "globs.\n\ncommands:\n";
    for (const char* c : {"summary", "scaling", "model", "crossover", "compare", "export", "report",
                          "profile", "predict"})
        s += fmt::format("  {:<9} {}\n", c, purpose(c));
    s += "\n'ringscale-stats COMMAND --help' lists a command's options. Exit status: 0 ok, "
         "1 regression (compare), 2 error.\n";
    return s;
}

cli_options parse_cli(int argc, const char* const* argv) {
    cli_options o;
    if (argc < 2)
        throw config_error("no command given (try --help)");
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        o.help_text = tool_help();
        return o;
    }
    if (cmd == "--version") {
        o.help_text = "ringscale-stats " RINGSCALE_VERSION "\n";
        return o;
    }
    if (!purpose(cmd))
        throw config_error(fmt::format("unknown command '{}' (try --help)", cmd));
    o.command = cmd;
    std::string format, predict, threshold;
    po::options_description d(
        fmt::format("{}\n{}\n\noptions",
                    usage_line(cmd) ? usage_line(cmd)
                                    : fmt::format("ringscale-stats {} [options] INPUT...", cmd),
                    purpose(cmd)));
    add_common(d, o, format);
    add_specific(cmd, d, o, format, predict, threshold);
    po::options_description hidden;
    hidden.add_options()("inputs", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(d).add(hidden);
    po::positional_options_description pos;
    pos.add("inputs", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc - 1, argv + 1).options(all).positional(pos).run(),
                  vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw config_error(fmt::format("{}: {}", cmd, e.what()));
    }
    if (vm.count("help")) {
        std::ostringstream os;
        os << d;
        o.help_text = os.str();
        return o;
    }
    if (!format.empty())
        o.format = parse_format(format);
    finish(cmd, o, vm, predict, threshold);
    return o;
}

} // namespace ringscale::analysis
