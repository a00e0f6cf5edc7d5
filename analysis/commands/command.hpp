// A subcommand of ringscale-stats: a name, a line of help, its own options and how it runs.
// Each is one file (analysis/commands/<name>.cpp) that defines make_<name>_command(), and one
// line of the table, commands.inc. The dispatcher
// (command.cpp) knows no subcommand by name: it builds the chosen one's options description,
// parses, and runs it.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace ringscale::analysis {

namespace po = boost::program_options;

class subcommand {
  public:
    virtual ~subcommand() = default;
    /// The word after `ringscale-stats`.
    virtual const char* name() const = 0;
    /// What it answers, as `ringscale-stats --help` lists it (one line).
    virtual const char* help() const = 0;
    /// Its positional arguments, as its usage line shows them.
    virtual const char* arguments() const { return "INPUT..."; }
    /// Declares its own options on `d`, each bound to a member or checked by a notifier.
    virtual void declare(po::options_description& d) = 0;
    /// Takes the positional `args` and what needs more than one option (`vm`, notified);
    /// config_error on bad input.
    virtual void finish(const po::variables_map& vm, std::vector<std::string> args) = 0;
    /// Prints its tables on `out`, notes on stderr. Returns the exit status (0, or 1 for a
    /// regression found by compare); throws ringscale::error for exit 2.
    virtual int run(std::ostream& out) const = 0;
};

/// Makes a fresh subcommand: one line of the table.
using command_factory = std::unique_ptr<subcommand> (*)();

/// Defines the table's make_NAME_command() (commands.inc) as a fresh TYPE.
#define RINGSCALE_STATS_FACTORY(name, type)                                                        \
    std::unique_ptr<subcommand> make_##name##_command() {                                          \
        return std::make_unique<type>();                                                           \
    }

/// Every subcommand, in the order `--help` lists them (commands.inc).
const std::vector<command_factory>& command_table();

/// A parsed command line: a subcommand ready to run, or a text to print (--help, --version).
struct parsed_cli {
    std::unique_ptr<subcommand> command;
    std::string help_text;
};

/// Parse argv against `table`. Throws config_error on bad input (unknown subcommand or
/// option, bad value), the message led by the subcommand's name where one was chosen.
parsed_cli parse_cli(int argc, const char* const* argv,
                     const std::vector<command_factory>& table = command_table());

/// Run a parsed command line: print its help text, or run its subcommand. Returns the exit
/// status; throws ringscale::error for exit 2.
int run_command(const parsed_cli& cli, std::ostream& out);

/// Text of `ringscale-stats --help`: each subcommand of `table` with its line of help.
std::string tool_help(const std::vector<command_factory>& table = command_table());

} // namespace ringscale::analysis
