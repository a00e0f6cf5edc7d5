#include "history_load.hpp"

#include "shared.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <utility>

namespace ringscale::analysis {

std::string default_history_index(const std::vector<std::string>& inputs, const char* who,
                                  const char* index_option) {
    std::error_code ec;
    RINGSCALE_REQUIRE(
        !inputs.empty() && std::filesystem::is_directory(inputs.front(), ec),
        fmt::format("{}: the first input is not a directory: give {} FILE", who, index_option));
    return (std::filesystem::path(inputs.front()) / "ringscale-history.sqlite").string();
}

namespace {

/// The files the index could not read: one line per kind (the first file named), or with
/// `verbose` one line each.
void note_skipped(const history::index_contents& contents, bool verbose) {
    if (verbose) {
        for (const std::string& p : contents.problems)
            note(p);
        return;
    }
    std::map<std::string, std::pair<std::size_t, std::string>> kinds; // why -> count, first
    for (std::size_t i = 0; i < contents.problems.size(); ++i) {
        auto& [count, first] = kinds[contents.problem_kinds[i]];
        if (count++ == 0)
            first = contents.problems[i];
    }
    for (const auto& [why, seen] : kinds)
        note(seen.first == 1 ? seen.second
                             : fmt::format("skipping {} files: {} (the first: {}; --verbose "
                                           "names each)",
                                           seen.first, why, seen.second));
}

} // namespace

std::unique_ptr<history_data> read_history(const std::vector<std::string>& inputs,
                                           const std::string& index_path,
                                           const history::series_options& opt, bool strict,
                                           double wait_s, bool verbose) {
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
    note_skipped(contents, verbose);
    note(fmt::format("index {}: {} launch(es); {} file(s) read, {} unchanged, {} gone, {} changed",
                     terminal_text(index_path), contents.launches.size(), counts.read,
                     counts.unchanged, counts.removed, counts.changed));
    if (counts.migrated > 0)
        note(fmt::format("index {}: {} file(s) now keyed by their real path (read once more "
                         "under no name)",
                         terminal_text(index_path), counts.migrated));
    out->set = history::build_series(contents, opt);
    for (const std::string& n : out->set.notes)
        note(n);
    return out;
}

} // namespace ringscale::analysis
