// Output files whole or absent (src/base/whole_file.hpp): a failed write leaves the old file
// and no temporary; a symlink at the destination is replaced, its target untouched; staged
// files appear together or not at all.
#include "src/base/error.hpp"
#include "src/base/whole_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace ringscale;
namespace fs = std::filesystem;

namespace {

struct scratch {
    fs::path dir;
    scratch() {
        dir = fs::temp_directory_path() /
              ("whole_file_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~scratch() { fs::remove_all(dir); }
    std::string at(const std::string& name) const { return (dir / name).string(); }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir))
            out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
};

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

} // namespace

TEST(whole_file, writes_and_replaces) {
    scratch s;
    write_whole_file(s.at("a.csv"), [](std::ostream& o) { o << "x,y\n1,2\n"; });
    write_whole_file(s.at("a.csv"), [](std::ostream& o) { o << "new\n"; });
    EXPECT_EQ(slurp(s.at("a.csv")), "new\n");
    EXPECT_EQ(s.names(), std::vector<std::string>{"a.csv"}); // no temporary left
}

TEST(whole_file, an_error_in_the_body_leaves_the_old_file_and_no_temporary) {
    scratch s;
    write_whole_file(s.at("a.csv"), [](std::ostream& o) { o << "old\n"; });
    EXPECT_THROW(write_whole_file(s.at("a.csv"),
                                  [](std::ostream& o) {
                                      o << "half";
                                      throw config_error("stop");
                                  }),
                 config_error);
    EXPECT_EQ(slurp(s.at("a.csv")), "old\n");
    EXPECT_EQ(s.names(), std::vector<std::string>{"a.csv"});
}

TEST(whole_file, a_file_size_limit_leaves_nothing_partial) {
    scratch s;
    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    rlimit small = old;
    small.rlim_cur = 4096;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string why;
    try {
        write_whole_file(s.at("big.csv"),
                         [](std::ostream& o) { o << std::string(1 << 20, 'x') << "\n"; });
    } catch (const error& e) {
        why = e.what();
    }
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
    EXPECT_NE(why.find("cannot write"), std::string::npos) << why;
    EXPECT_NE(why.find("File too large"), std::string::npos) << why;
    EXPECT_TRUE(s.names().empty());
}

TEST(whole_file, a_symlink_is_replaced_never_followed) {
    scratch s;
    write_whole_file(s.at("target.txt"), [](std::ostream& o) { o << "precious\n"; });
    fs::create_symlink(s.at("target.txt"), s.at("link.csv"));
    write_whole_file(s.at("link.csv"), [](std::ostream& o) { o << "export\n"; });
    EXPECT_EQ(slurp(s.at("target.txt")), "precious\n");
    EXPECT_FALSE(fs::is_symlink(s.at("link.csv")));
    EXPECT_EQ(slurp(s.at("link.csv")), "export\n");
}

TEST(whole_file, a_directory_or_a_missing_one_is_an_error) {
    scratch s;
    fs::create_directories(s.at("sub"));
    EXPECT_THROW(write_whole_file(s.at("sub"), [](std::ostream&) {}), error);
    EXPECT_THROW(write_whole_file(s.at("none/x.csv"), [](std::ostream&) {}), error);
}

TEST(staged_files, appear_together_with_the_last_one_last) {
    scratch s;
    std::vector<std::string> published;
    {
        staged_files st(s.dir.string());
        write_whole_file(st.path() + "/report.md", [](std::ostream& o) { o << "# r\n"; });
        write_whole_file(st.path() + "/a.gp", [](std::ostream& o) { o << "plot\n"; });
        write_whole_file(st.path() + "/b.dat", [](std::ostream& o) { o << "1 2\n"; });
        EXPECT_EQ(s.names().size(), 1u); // only the staging directory so far
        published = st.publish("report.md");
    }
    EXPECT_EQ(published, (std::vector<std::string>{"a.gp", "b.dat", "report.md"}));
    EXPECT_EQ(s.names(), published);
}

TEST(staged_files, unpublished_files_are_removed) {
    scratch s;
    {
        staged_files st(s.dir.string());
        write_whole_file(st.path() + "/a.gp", [](std::ostream& o) { o << "plot\n"; });
    }
    EXPECT_TRUE(s.names().empty());
}

TEST(staged_files, publish_replaces_a_symlink_without_writing_through_it) {
    scratch s;
    write_whole_file(s.at("target.txt"), [](std::ostream& o) { o << "precious\n"; });
    fs::create_symlink(s.at("target.txt"), s.at("report.md"));
    staged_files st(s.dir.string());
    write_whole_file(st.path() + "/report.md", [](std::ostream& o) { o << "# r\n"; });
    st.publish("report.md");
    EXPECT_EQ(slurp(s.at("target.txt")), "precious\n");
    EXPECT_EQ(slurp(s.at("report.md")), "# r\n");
}

TEST(staged_files, a_directory_in_the_way_refuses_the_set_before_any_move) {
    // report.md is a directory: the whole set is refused before a plot is moved in.
    scratch s;
    fs::create_directory(s.at("report.md"));
    write_whole_file(s.at("old.png"), [](std::ostream& o) { o << "old\n"; });
    const auto before = s.names();
    {
        staged_files st(s.dir.string());
        for (const char* n : {"a.png", "old.png", "report.md"})
            write_whole_file(st.path() + "/" + n, [](std::ostream& o) { o << "new\n"; });
        EXPECT_THROW(st.publish("report.md"), error);
    }
    EXPECT_EQ(s.names(), before); // the staging directory gone, nothing moved in
    EXPECT_EQ(slurp(s.at("old.png")), "old\n");
}
