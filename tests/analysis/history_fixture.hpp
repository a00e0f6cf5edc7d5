// The history tests' last step: a directory of fixture results files indexed as a nightly run
// indexes them, and its series built.
#pragma once

#include "analysis/history/index.hpp"
#include "analysis/history/series.hpp"
#include "analysis/reading/reader.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

namespace ringscale::test_fixture {

/// The series of the results files in `dir` under `opt` (its now_s set to the present); `dir`
/// is removed. The series refer into one index kept here: valid until the next call.
inline analysis::history::series_set series_of_dir(const std::string& dir,
                                                   analysis::history::series_options opt) {
    using namespace analysis::history;
    std::vector<std::string> notes, problems;
    history_index index(dir + "/index.sqlite", notes);
    index.update(analysis::expand_inputs({dir}, problems));
    static index_contents contents; // build_series refers into it
    contents = index.load();
    opt.now_s = static_cast<std::int64_t>(std::time(nullptr));
    series_set set = build_series(contents, opt);
    std::filesystem::remove_all(dir);
    return set;
}

} // namespace ringscale::test_fixture
