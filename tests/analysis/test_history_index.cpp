// The history index shared by a team: one file beyond the reader's limits is left
// out with one line naming it and the field, the rest indexed; another program's SQLite file
// is refused byte-identical; a symlinked index, journal or lock is refused; a replacement of
// the same size and mtime is read again; dates before 2000 or not on the calendar are named;
// a run waits for the lock and says who holds it.
#include "analysis/history/index.hpp"
#include "analysis/history/index_lock.hpp"
#include "analysis/history/index_rows.hpp"
#include "analysis/history/sqlite.hpp"
#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace ringscale::analysis;
using namespace ringscale::analysis::history;
using ringscale::config_error;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_dir;
using ringscale::test_fixture::fixture_file;
namespace fs = std::filesystem;

namespace {

fixture_file launch(int j, double base_time_s = 1e-3) {
    fixture_file f;
    f.created_utc = fmt::format("2025-01-01T{:02}:00:00Z", j % 24);
    f.launch_id = fmt::format("{:032x}", j + 1);
    fixture_case c;
    c.world_size = 2;
    c.iterations = 3;
    c.base_time_s = base_time_s;
    f.cases.push_back(c);
    return f;
}

std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The index of `dir` updated and loaded; its problems' lines in `problems`.
index_contents index_of(const std::string& dir, std::vector<std::string>& notes) {
    std::vector<std::string> unread;
    history_index index(dir + "/index.sqlite", notes, 5);
    index.update(expand_inputs({dir}, unread));
    return index.load();
}

void open_index(const std::string& path, std::vector<std::string>& notes) {
    history_index index(path, notes, 1);
}

void take_lock(const std::string& path, double wait_s,
               const std::function<void(const std::string&)>& say) {
    index_lock lock(path, wait_s, say);
}

struct bad_kind {
    const char* what;
    std::string file;
    std::function<void(fixture_file&)> spoil;
    const char* field; ///< what the one line must name
};

} // namespace

TEST(history_index, one_bad_file_costs_only_itself) {
    const std::vector<bad_kind> kinds = {
        {"tab in the name", "bad\tname.h5", [](fixture_file&) {}, "name holds a control"},
        {"control byte in the name", "bad\x1bname.h5", [](fixture_file&) {},
         "name holds a control"},
        {"long launch_id", "bad.h5", [](fixture_file& f) { f.launch_id = std::string(600, 'a'); },
         "launch_id is 6"},
        {"long git_commit", "bad.h5", [](fixture_file& f) { f.git_commit = std::string(300, 'c'); },
         "git_commit is 300 bytes"},
        {"long created_utc", "bad.h5",
         [](fixture_file& f) { f.created_utc += std::string(80, 'x'); }, "created_utc is 100"},
        {"1001 /meta attributes", "bad.h5",
         [](fixture_file& f) {
             for (int k = 0; k < 1001; ++k)
                 f.labels.emplace_back(fmt::format("k{}", k), "v");
         },
         "/meta holds"},
    };
    for (const bad_kind& k : kinds) {
        SCOPED_TRACE(k.what);
        const std::string dir = fixture_dir("history_bad");
        write_fixture_file(dir + "/good_0.h5", launch(0));
        write_fixture_file(dir + "/good_1.h5", launch(1));
        fixture_file bad = launch(2);
        k.spoil(bad);
        write_fixture_file(dir + "/" + k.file, bad);
        std::vector<std::string> notes;
        index_contents got;
        ASSERT_NO_THROW(got = index_of(dir, notes));
        EXPECT_EQ(got.launches.size(), 2u);
        ASSERT_EQ(got.problems.size(), 1u);
        EXPECT_NE(got.problems[0].find("/bad"), std::string::npos) << got.problems[0];
        EXPECT_NE(got.problems[0].find(k.field), std::string::npos) << got.problems[0];
        EXPECT_EQ(got.problems[0].find('\t'), std::string::npos) << "the name is escaped";
        // The next run keeps the verdict without reading again.
        ASSERT_NO_THROW(got = index_of(dir, notes));
        EXPECT_EQ(got.launches.size(), 2u);
        fs::remove_all(dir);
    }
}

TEST(history_index, a_long_value_is_kept_cut_as_the_report_shows_it) {
    // A /meta value or an identity over 4,096 bytes: the launch is indexed, the value cut with
    // its size and hash (text_escape.hpp's cut_long_value), as every report shows it.
    const std::string dir = fixture_dir("history_long");
    write_fixture_file(dir + "/good_0.h5", launch(0));
    fixture_file big = launch(1);
    big.labels = {{"big", std::string(5000, 'v')}};
    big.cases[0].text_params.emplace_back("extra", std::string(5000, 'i'));
    write_fixture_file(dir + "/big.h5", big);
    std::vector<std::string> notes;
    index_contents got;
    ASSERT_NO_THROW(got = index_of(dir, notes));
    EXPECT_TRUE(got.problems.empty()) << got.problems.front();
    ASSERT_EQ(got.launches.size(), 2u);
    bool meta_cut = false, key_cut = false;
    for (const launch_record& l : got.launches)
        for (const auto& [k, v] : l.meta)
            meta_cut = meta_cut ||
                       (v.size() <= 4096 && v.find("[cut: 5000 bytes, hash ") != std::string::npos);
    for (const launch_case& c : got.cases)
        key_cut =
            key_cut || (c.key.size() <= 4096 && c.key.find("bytes, hash ") != std::string::npos);
    EXPECT_TRUE(meta_cut);
    EXPECT_TRUE(key_cut);
    fs::remove_all(dir);
}

TEST(history_index, another_programs_database_is_left_untouched) {
    const std::string dir = fixture_dir("history_foreign");
    write_fixture_file(dir + "/good_0.h5", launch(0));
    const std::string other = dir + "/other.sqlite";
    {
        database db(other);
        db.exec("CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('keep me')");
    }
    const std::string before = bytes_of(other);
    std::vector<std::string> notes;
    EXPECT_THROW(open_index(other, notes), config_error);
    EXPECT_EQ(bytes_of(other), before);
    {
        database db(other); // an application_id of its own
        db.exec("PRAGMA application_id = 42");
    }
    const std::string tagged = bytes_of(other);
    EXPECT_THROW(open_index(other, notes), config_error);
    EXPECT_EQ(bytes_of(other), tagged);
    fs::remove_all(dir);
}

TEST(history_index, symlinks_are_refused) {
    const std::string dir = fixture_dir("history_symlink");
    std::vector<std::string> notes;
    const std::string index = dir + "/index.sqlite";
    fs::create_symlink(dir + "/absent", index);
    EXPECT_THROW(open_index(index, notes), config_error);
    EXPECT_FALSE(fs::exists(dir + "/absent"));
    fs::remove(index);
    std::ofstream(dir + "/empty").close();
    fs::create_symlink(dir + "/empty", index);
    EXPECT_THROW(open_index(index, notes), config_error);
    EXPECT_EQ(fs::file_size(dir + "/empty"), 0u);
    fs::remove(index);
    for (const char* tail : {"-journal", ".lock"}) {
        fs::create_symlink(dir + "/elsewhere", index + tail);
        EXPECT_THROW(open_index(index, notes), config_error) << tail;
        EXPECT_FALSE(fs::exists(dir + "/elsewhere"));
        fs::remove(index + tail);
    }
    fs::remove_all(dir);
}

TEST(history_index, a_same_stamp_replacement_is_read_again) {
    const std::string dir = fixture_dir("history_stamp");
    const std::string path = dir + "/launch.h5", other = dir + "/other.h5.tmp";
    write_fixture_file(path, launch(0, 1e-3));
    write_fixture_file(other, launch(1, 2.24e-3));
    ASSERT_EQ(fs::file_size(path), fs::file_size(other)) << "the replacement must look the same";
    std::vector<std::string> notes, unread;
    const std::vector<std::string> files = {path};
    history_index index(dir + "/index.sqlite", notes, 5);
    index.update(files);
    ASSERT_EQ(index.load().cases.size(), 1u);
    const double before = index.load().cases[0].step_s;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    // cp -p: the bytes of another launch, the old size and mtime.
    fs::copy_file(other, path, fs::copy_options::overwrite_existing);
    const timespec times[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
    const update_counts counts = index.update(files);
    EXPECT_EQ(counts.changed, 1u);
    const index_contents got = index.load();
    ASSERT_EQ(got.cases.size(), 1u);
    EXPECT_GT(got.cases[0].step_s, 1.5 * before);
    fs::remove_all(dir);
}

TEST(history_index, bad_dates_are_named) {
    const std::string dir = fixture_dir("history_dates");
    write_fixture_file(dir + "/good.h5", launch(0));
    const std::vector<std::pair<std::string, std::string>> created = {
        {"epoch.h5", "1970-01-01T00:00:00Z"},
        {"feb31.h5", "2025-02-31T00:00:00Z"},
        {"y1999.h5", "1999-12-31T23:59:59Z"}};
    int j = 1;
    for (const auto& [name, date] : created) {
        fixture_file f = launch(j++);
        f.created_utc = date;
        write_fixture_file(dir + "/" + name, f);
    }
    fixture_file negative = launch(j++);
    negative.int_meta = {{"launchdate", -5}};
    write_fixture_file(dir + "/negative.h5", negative);
    std::vector<std::string> notes;
    const index_contents got = index_of(dir, notes);
    EXPECT_EQ(got.launches.size(), 1u);
    ASSERT_EQ(got.problems.size(), 4u);
    for (const std::string& p : got.problems) {
        const bool named = p.find("dated before 2000-01-01") != std::string::npos ||
                           p.find("not a calendar date") != std::string::npos;
        EXPECT_TRUE(named) << p;
        EXPECT_NE(p.find("left out of every series"), std::string::npos) << p;
    }
    EXPECT_TRUE(parse_utc("2024-02-29T00:00:00Z").has_value());
    EXPECT_FALSE(parse_utc("2025-02-29T00:00:00Z").has_value());
    EXPECT_FALSE(parse_utc("2025-04-31T00:00:00Z").has_value());
    fs::remove_all(dir);
}

TEST(history_index, a_run_waits_for_the_lock_and_names_its_holder) {
    const std::string dir = fixture_dir("history_lock");
    const std::string index = dir + "/index.sqlite";
    std::vector<std::string> said;
    const auto say = [&said](const std::string& line) { said.push_back(line); };
    auto held = std::make_unique<index_lock>(index, 0, say);
    EXPECT_THROW(take_lock(index, 0.2, say), config_error);
    ASSERT_FALSE(said.empty());
    EXPECT_NE(said[0].find(fmt::format("pid {} on ", ::getpid())), std::string::npos) << said[0];
    said.clear();
    std::thread release([&held] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        held.reset();
    });
    EXPECT_NO_THROW(take_lock(index, 30, say));
    release.join();
    EXPECT_EQ(said.size(), 1u) << "one line when it starts to wait";
    fs::remove_all(dir);
}

TEST(history_index, a_read_out_of_time_is_read_again_on_the_next_run) {
    // A run whose reader ran out of time on the file (a busy machine) keeps it as add_file
    // keeps such a read; the next run reads it again, while a file that failed for another
    // reason stays a problem while unchanged.
    const std::string dir = fixture_dir("history_retry");
    const std::string path = dir + "/launch.h5", index_path = dir + "/index.sqlite";
    write_fixture_file(path, launch(0, 1e-3));
    std::vector<std::string> notes;
    const std::vector<std::string> files = {path};
    for (const bool retry : {true, false}) {
        SCOPED_TRACE(retry ? "out of time" : "another problem");
        fs::remove(index_path);
        history_index(index_path, notes, 5).update({}); // the schema, no file yet
        struct stat st {};
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        const file_key key{static_cast<std::int64_t>(st.st_size),
                           st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
                           static_cast<std::int64_t>(st.st_ino),
                           st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
        file_summary failed{"reading it took more than 10 s of CPU time: read again next run",
                            std::nullopt,
                            {},
                            retry};
        {
            database db(index_path);
            index_writer(db).add_file(path, key, failed);
        }
        history_index index(index_path, notes, 5);
        const update_counts counts = index.update(files);
        EXPECT_EQ(counts.read, retry ? 1u : 0u);
        EXPECT_EQ(counts.unchanged, retry ? 0u : 1u);
        EXPECT_EQ(index.load().cases.size(), retry ? 1u : 0u);
    }
    fs::remove_all(dir);
}
