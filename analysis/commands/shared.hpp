// What several subcommands share: the options, each declared once with its check (a notifier
// refuses a bad value, one line and exit 2, before any work), and the steps they take on their
// way (load, pool, summarise with the sanity gate's notes, scale and model every family, print
// tables; notes go to stderr, one line each). A subcommand declares the groups it uses.
#pragma once

#include "command.hpp"

#include "analysis/cases/cases.hpp"
#include "analysis/comparisons/scaling.hpp"
#include "analysis/measures/summary.hpp"
#include "analysis/presentation/views.hpp"
#include "analysis/reading/reader.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace ringscale::analysis {

/// What every subcommand has: its inputs, how they are read and how its tables print.
struct common_options {
    std::vector<std::string> inputs;
    output_format format = output_format::text;
    bool strict = false;          ///< an unreadable file or case is an error (exit 2)
    bool remove_outliers = false; ///< drop Tukey outliers before the statistics
    sanity_limits limits;         ///< --peak-gflops, --link-gbs, --peak
    double level = 0.95;          ///< --confidence
};

/// --strict, --remove-outliers, --peak-gflops, --link-gbs, --peak, --confidence and, with
/// `format`, --format: bound to `c`.
void declare_common(po::options_description& d, common_options& c, bool format = true);

/// `args` as c.inputs; config_error "NAME: no input files given" when there are none.
void take_inputs(const char* name, std::vector<std::string> args, common_options& c);

/// A subcommand of INPUT... with the options every one has (its declare names the groups it
/// takes, declare_common among them).
struct input_command : subcommand {
    void finish(const po::variables_map&, std::vector<std::string> args) override {
        take_inputs(name(), std::move(args), m_common);
    }

    common_options m_common;
    bool m_pool_resources = false; ///< --pool-resources, where declared
};

/// --bootstrap N (100 to 1e6 replicates) and --seed K.
void declare_bootstrap(po::options_description& d, std::size_t& replicates, std::uint64_t& seed);

/// --min-launches N (2 to 1e6); `help` says what the subcommand does with it.
void declare_min_launches(po::options_description& d, std::size_t& launches, const char* help);

/// --base-p P (a rank count) and --min-launches, as scaling and report take them.
void declare_base_p(po::options_description& d, std::optional<int>& base_p, std::size_t& launches);

/// --tie-floor PERCENT, stored as a fraction.
void declare_tie_floor(po::options_description& d, double& fraction);

/// --pool-resources.
void declare_pool_resources(po::options_description& d, bool& pool);

/// --hardware h100|FILE (the file is read when the subcommand runs).
void declare_hardware(po::options_description& d, std::string& hardware);

/// --skip-marked (leave launches marked as measured on a contended machine or while the
/// sentinel drifted out) and --keep-marked (accepted; a note says that keeping them is the
/// default: they weigh through the decision rule).
void declare_marked(po::options_description& d, bool& skip_marked);

/// One line on stderr: "ringscale-stats: LINE", escaped for the terminal.
void note(const std::string& line);

/// Every case of `inputs`; config_error when there is none.
result_set load(const std::vector<std::string>& inputs, bool strict);

/// The launches of each case pooled (launches of different threads or cores kept apart unless
/// `pool_resources`), with one note per case concerned.
std::vector<pooled_case> pool_with_notes(const result_set& rs, bool pool_resources);

/// One summary row per case, with the sanity gate's notes (c.strict: an impossible figure is
/// an error) and one note per reason a GPU case has no MFU.
std::vector<case_summary> summarize_with_notes(const std::vector<pooled_case>& pooled,
                                               const common_options& c);

/// Scaling of every family with 2+ P against its base case; a refused family (collectives)
/// and one without a case at the base P are noted.
std::vector<scaling_result> scale_families(const std::vector<family>& families,
                                           const scaling_options& opt);

/// A model of every family with at least 3 distinct P; the others are named in `refusals`
/// with the reason. Predictions at `at_p` with a bootstrap band (`replicates` from `seed`, at
/// confidence `level`).
std::vector<family_model> fit_family_models(const std::vector<family>& families,
                                            const std::vector<double>& at_p, std::size_t replicates,
                                            std::uint64_t seed, double level,
                                            std::vector<std::string>& refusals);

/// Several tables on one stream: one JSON object, or the tables one after another.
void print_tables(std::ostream& out, output_format format,
                  const std::vector<std::pair<std::string, table>>& tables);

} // namespace ringscale::analysis
