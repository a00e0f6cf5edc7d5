#include "src/base/error.hpp"
#include "src/base/h5.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace ringscale;

namespace {
std::string temp_path(const char* tag) {
    return std::string("/tmp/ringscale_test_h5_") + tag + "_" + std::to_string(getpid()) + ".h5";
}
} // namespace

TEST(h5, round_trip_attributes_and_datasets) {
    const std::string path = temp_path("rt");
    {
        auto f = h5::file::create(path);
        auto root = f.root();
        root.set_attr("schema", "ringscale/1");
        root.set_attr("complete", 0);
        root.set_attr("complete", 1); // overwrite
        root.set_attr("pi", 3.25);
        auto g = root.create_group("cases").create_group("0000");
        g.write<double>("time_s", {1, 2, 3, 4, 5, 6}, {3, 2});
        g.write<std::uint8_t>("is_warmup", {1, 0, 0}, {3});
        g.write_strings("names", {"a", "bé", ""});
        g.write_string("config", "job = collectives\n");
        f.flush();
    }
    auto f = h5::file::open_read(path);
    auto root = f.root();
    EXPECT_EQ(root.attr_string("schema"), "ringscale/1");
    EXPECT_EQ(root.attr_int("complete"), 1);
    EXPECT_DOUBLE_EQ(root.attr_double("pi"), 3.25);
    EXPECT_EQ(root.attr_kind("pi"), h5::attr_type::floating);
    EXPECT_EQ(root.attr_as_text("complete"), "1");
    EXPECT_FALSE(root.has_attr("missing"));
    auto g = root.open_group("cases").open_group("0000");
    std::vector<hsize_t> dims;
    auto t = g.read<double>("time_s", &dims);
    EXPECT_EQ(dims, (std::vector<hsize_t>{3, 2}));
    EXPECT_EQ(t, (std::vector<double>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(g.read<std::int32_t>("is_warmup"),
              (std::vector<std::int32_t>{1, 0, 0})); // converted on read
    EXPECT_EQ(g.read_strings("names"), (std::vector<std::string>{"a", "bé", ""}));
    EXPECT_EQ(g.read_string("config"), "job = collectives\n");
    EXPECT_EQ(root.open_group("cases").children(), (std::vector<std::string>{"0000"}));
    std::remove(path.c_str());
}

TEST(h5, errors_name_the_file_and_the_call) {
    try {
        h5::file::open_read("/nonexistent/nowhere.h5");
        FAIL();
    } catch (const error& e) {
        EXPECT_EQ(e.kind(), error_kind::hdf5);
        EXPECT_NE(std::string(e.what()).find("/nonexistent/nowhere.h5"), std::string::npos);
    }
    const std::string path = temp_path("err");
    auto f = h5::file::create(path);
    EXPECT_THROW(f.root().open_group("absent"), error);
    EXPECT_THROW(f.root().write<double>("bad", {1, 2, 3}, {2}), error);
    std::remove(path.c_str());
}

TEST(h5, not_an_hdf5_file) {
    const std::string path = temp_path("text");
    FILE* fp = std::fopen(path.c_str(), "w");
    std::fputs("not hdf5", fp);
    std::fclose(fp);
    EXPECT_THROW(h5::file::open_read(path), error);
    std::remove(path.c_str());
}
