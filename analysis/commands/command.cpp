#include "command.hpp"
#include "option_ranges.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <fmt/format.h>
#include <sstream>

namespace ringscale::analysis {

// The factories, each defined in its subcommand's file.
#define RINGSCALE_STATS_COMMAND(name) std::unique_ptr<subcommand> make_##name##_command();
#include "commands.inc"
#undef RINGSCALE_STATS_COMMAND

const std::vector<command_factory>& command_table() {
#define RINGSCALE_STATS_COMMAND(name) &make_##name##_command,
    static const std::vector<command_factory> table = {
#include "commands.inc"
    };
#undef RINGSCALE_STATS_COMMAND
    return table;
}

std::string tool_help(const std::vector<command_factory>& table) {
    std::string s = "ringscale-stats: offline statistics for ringscale results files "
                    "(schema ringscale/2; ringscale/1 still read).\n\n"
                    "usage: ringscale-stats COMMAND [options] INPUT...\n"
                    "INPUT: files, directories (searched recursively for *.h5, *.h5.part) or "
                    "globs.\n\ncommands:\n";
    for (const command_factory make : table) {
        const auto command = make();
        s += fmt::format("  {:<9} {}\n", command->name(), command->help());
    }
    s += "\n'ringscale-stats COMMAND --help' lists a command's options. Exit status: 0 ok, "
         "1 regression (compare), 2 error.\n";
    return s;
}

namespace {

/// config_error naming --confidence and --bootstrap in one line when a `level` percentile
/// band cannot be resolved from `replicates`: each tail must hold at least one replicate, so
/// level <= 1 - 2 / replicates (0.999 at the default 2000; beyond it every band is the same
/// extreme replicates whatever the level says).
void check_confidence_resolved(double level, std::size_t replicates) {
    const double n = static_cast<double>(replicates);
    if ((1 - level) * n >= 2 - 1e-9)
        return;
    const double needed = std::ceil(2 / (1 - level) - 1e-6);
    throw config_error(fmt::format(
        "--confidence {:g} is beyond what --bootstrap {} replicates can resolve (at most {:g} = "
        "1 - 2/{}: each tail of a band must hold a replicate); {}",
        level, replicates, 1 - 2 / n, replicates,
        needed <= static_cast<double>(max_bootstrap)
            ? fmt::format("raise --bootstrap to at least {:.0f} or lower --confidence", needed)
            : fmt::format("lower --confidence (--bootstrap stops at {})", max_bootstrap)));
}

} // namespace

parsed_cli parse_cli(int argc, const char* const* argv, const std::vector<command_factory>& table) {
    parsed_cli p;
    if (argc < 2)
        throw config_error("no command given (try --help)");
    const std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help")
        return {nullptr, tool_help(table)};
    if (name == "--version")
        return {nullptr, "ringscale-stats " RINGSCALE_VERSION "\n"};
    for (const command_factory make : table)
        if (auto command = make(); !p.command && name == command->name())
            p.command = std::move(command);
    if (!p.command)
        throw config_error(fmt::format("unknown command '{}' (try --help)", name));
    po::options_description d(fmt::format("ringscale-stats {} [options] {}\n{}\n\noptions", name,
                                          p.command->arguments(), p.command->help()));
    d.add_options()("help,h", "show this help");
    p.command->declare(d);
    po::options_description all;
    all.add(d).add_options()("inputs", po::value<std::vector<std::string>>());
    po::positional_options_description inputs;
    inputs.add("inputs", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc - 1, argv + 1).options(all).positional(inputs).run(),
                  vm);
        if (vm.count("help")) {
            std::ostringstream os;
            os << d;
            return {nullptr, os.str()};
        }
        po::notify(vm); // the options' own checks, before any work
    } catch (const po::error& e) {
        throw config_error(fmt::format("{}: {}", name, e.what()));
    }
    if (vm.count("confidence") && vm.count("bootstrap"))
        check_confidence_resolved(vm["confidence"].as<double>(), vm["bootstrap"].as<std::size_t>());
    p.command->finish(vm, vm.count("inputs") ? vm["inputs"].as<std::vector<std::string>>()
                                             : std::vector<std::string>{});
    return p;
}

int run_command(const parsed_cli& cli, std::ostream& out) {
    if (!cli.command) {
        out << cli.help_text;
        return 0;
    }
    return cli.command->run(out);
}

} // namespace ringscale::analysis
