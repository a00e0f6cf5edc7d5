#include "history_load.hpp"

#include "shared.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace ringscale::analysis {

std::string default_history_index(const std::vector<std::string>& inputs, const char* who,
                                  const char* index_option) {
    std::error_code ec;
    RINGSCALE_REQUIRE(
        !inputs.empty() && std::filesystem::is_directory(inputs.front(), ec),
        fmt::format("{}: the first input is not a directory: give {} FILE", who, index_option));
    return (std::filesystem::path(inputs.front()) / "ringscale-history.sqlite").string();
}

std::unique_ptr<history_data> read_history(const std::vector<std::string>& inputs,
                                           const std::string& index_path,
                                           const history::series_options& opt, bool strict,
                                           double wait_s) {
    std::vector<std::string> problems, notes;
    const std::vector<std::string> files = expand_inputs(inputs, problems);
    for (const std::string& p : problems)
        note(p);
    RINGSCALE_REQUIRE(!files.empty(), "history: no results files in the inputs");
    auto out = std::make_unique<history_data>();
    history::index_contents& contents = out->contents;
    history::update_counts counts;
    { // the lock is held from the open to the close of the index
        history::history_index index(index_path, notes, wait_s, note);
        counts = index.update(files);
        try {
            contents = index.load();
        } catch (const history::damaged_index& e) {
            notes.push_back(fmt::format("index '{}' holds rows no launch writes ({}): rebuilt "
                                        "from the results files",
                                        terminal_text(index_path), e.what()));
            index.clear();
            index.update(files);
            contents = index.load();
        }
    }
    for (const std::string& n : notes)
        note(n);
    for (const std::string& n : counts.notes)
        note(n);
    if (strict && !problems.empty())
        throw config_error(fmt::format("--strict: {}", problems.front()));
    if (strict && !contents.problems.empty())
        throw config_error(fmt::format("--strict: {}", contents.problems.front()));
    for (const std::string& p : contents.problems)
        note(p);
    note(fmt::format("index {}: {} launch(es); {} file(s) read, {} unchanged, {} gone, {} changed",
                     terminal_text(index_path), contents.launches.size(), counts.read,
                     counts.unchanged, counts.removed, counts.changed));
    out->set = history::build_series(contents, opt);
    for (const std::string& n : out->set.notes)
        note(n);
    return out;
}

} // namespace ringscale::analysis
