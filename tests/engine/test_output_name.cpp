// Results file names two launches can never share (src/engine/output_name.hpp).
#include "src/base/error.hpp"
#include "src/engine/output_name.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace ringscale;

namespace {

fs::path scratch(const char* name) {
    const fs::path dir =
        fs::temp_directory_path() / ("ringscale_output_name_" + std::to_string(getpid())) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

} // namespace

TEST(output_name, environment_text_cannot_leave_the_directory) {
    EXPECT_EQ(file_name_token("12345"), "12345");
    EXPECT_EQ(file_name_token("../../evil"), "______evil");
    EXPECT_EQ(file_name_token("a b;c$(x)"), "a_b_c__x_");
    EXPECT_EQ(file_name_token(std::string(200, '7')).size(), 64u);
}

TEST(output_name, numbered_candidates_keep_directory_and_extension) {
    EXPECT_EQ(numbered_path("d/r_np2_j42.h5", 0), "d/r_np2_j42.h5");
    EXPECT_EQ(numbered_path("d/r_np2_j42.h5", 3), "d/r_np2_j42_3.h5");
}

TEST(output_name, two_writers_of_one_name_get_two_files) {
    const fs::path dir = scratch("two");
    const std::string want = (dir / "ringscale_x_np2_20261123T120000Z_j42.h5").string();
    auto [first, file1] = reserve_results_file(want, false);
    auto [second, file2] = reserve_results_file(want, false);
    EXPECT_EQ(first, want);
    EXPECT_EQ(second, numbered_path(want, 1));
    EXPECT_TRUE(fs::exists(first + ".part"));
    EXPECT_TRUE(fs::exists(second + ".part"));
}

TEST(output_name, an_explicit_name_that_exists_is_refused) {
    const fs::path dir = scratch("fixed");
    const std::string want = (dir / "mine.h5").string();
    std::ofstream(want) << "x";
    EXPECT_THROW(reserve_results_file(want, true), config_error);
}

TEST(output_name, publishing_never_replaces_a_file_that_appeared) {
    const fs::path dir = scratch("publish");
    const std::string final = (dir / "r.h5").string();
    std::ofstream(final) << "someone else's results";
    std::ofstream(final + ".part") << "mine";
    const std::string got = publish_results_file(final + ".part", final);
    EXPECT_EQ(got, numbered_path(final, 1));
    std::ifstream other(final), mine(got);
    std::string a, b;
    std::getline(other, a);
    std::getline(mine, b);
    EXPECT_EQ(a, "someone else's results");
    EXPECT_EQ(b, "mine");
    EXPECT_FALSE(fs::exists(final + ".part"));
}
