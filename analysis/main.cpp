// ringscale-stats: parse -> analyse -> print. Exit 0 ok, 1 regression (compare), 2 error.
#include "analysis/commands/command.hpp"
#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>

int main(int argc, char** argv) {
    try {
        using namespace ringscale::analysis;
        const int status = run_command(parse_cli(argc, argv), std::cout);
        // A full disk or a closed pipe must not pass for a finished analysis.
        if (!std::cout.flush())
            throw std::runtime_error("cannot write the output to stdout (disk full or closed?)");
        return status;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ringscale-stats: %s\n", ringscale::terminal_text(e.what()).c_str());
        return 2;
    }
}
