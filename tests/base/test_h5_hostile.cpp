// The HDF5 wrapper's checks before it reads: an array where one value belongs, an
// attribute or dataset of another class, links and storage outside the file are refused with
// an error naming them, never read.
#include "src/base/error.hpp"
#include "src/base/h5.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace ringscale;

namespace {

std::string temp_path(const char* tag) {
    return std::string("/tmp/ringscale_test_h5_hostile_") + tag + "_" + std::to_string(getpid()) +
           ".h5";
}

/// The message `fn` throws as a ringscale::error, or "" when it does not throw.
template <class F>
std::string refusal(F fn) {
    try {
        fn();
    } catch (const error& e) {
        return e.what();
    }
    return "";
}

/// An int64 attribute of shape `dims` (all 7) on `obj`.
void array_attr(hid_t obj, const char* name, std::vector<hsize_t> dims) {
    hsize_t n = 1;
    for (hsize_t d : dims)
        n *= d;
    std::vector<std::int64_t> v(n, 7);
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, v.data());
    H5Aclose(a);
    H5Sclose(space);
}

} // namespace

TEST(h5_hostile, an_array_attribute_is_never_read_as_one_value) {
    const std::string path = temp_path("attr");
    {
        auto f = h5::file::create(path);
        const auto root = f.root();
        array_attr(root.id(), "world_size", {2, 2});
        array_attr(root.id(), "one", {1});
        f.root().set_attr("text", "ok");
        f.root().set_attr("real", 0.5);
    }
    const auto f = h5::file::open_read(path);
    const auto root = f.root();
    EXPECT_NE(refusal([&] {
                  root.attr_int("world_size");
              }).find("attribute 'world_size' is of shape [2, 2], not a single value"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.attr_double("world_size"); }).find("of shape [2, 2]"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.attr_int("one"); }).find("of shape [1]"), std::string::npos);
    EXPECT_NE(refusal([&] { root.attr_int("real"); }).find("'real' is not an integer"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.attr_double("text"); }).find("'text' is not a number"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.attr_string("real"); }).find("'real' is not a string"),
              std::string::npos);
    EXPECT_EQ(root.attr_string("text"), "ok");
    EXPECT_EQ(root.attr_double("real"), 0.5);
    std::remove(path.c_str());
}

TEST(h5_hostile, links_and_storage_outside_the_file_are_not_followed) {
    const std::string path = temp_path("links"), other = temp_path("other");
    {
        auto o = h5::file::create(other);
        o.root().create_group("g").write<double>("t", {1, 2}, {2});
    }
    {
        auto f = h5::file::create(path);
        const auto root_group = f.root(); // open while its id is used
        const hid_t root = root_group.id();
        H5Lcreate_external(other.c_str(), "/g", root, "ext", H5P_DEFAULT, H5P_DEFAULT);
        f.root().create_group("real");
        H5Lcreate_soft("/real", root, "soft", H5P_DEFAULT, H5P_DEFAULT);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_external(dcpl, "/dev/zero", 0, 16);
        const hsize_t n = 2;
        const hid_t space = H5Screate_simple(1, &n, nullptr);
        H5Dclose(H5Dcreate2(root, "zeros", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
        H5Sclose(space);
        H5Pclose(dcpl);
        f.root().write_strings("names", {"a", "b"});
    }
    const auto f = h5::file::open_read(path);
    const auto root = f.root();
    EXPECT_NE(refusal([&] {
                  root.open_group("ext");
              }).find("'ext' is an external link to another file: not followed"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.object_address("ext"); }).find("external link"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.open_group("soft"); }).find("'soft' is a soft"),
              std::string::npos);
    EXPECT_NE(refusal([&] {
                  root.read<double>("zeros");
              }).find("dataset 'zeros' keeps its data in external files"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.read<double>("names"); }).find("does not hold numbers"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.read_string("names"); }).find("declares 2 strings"),
              std::string::npos);
    EXPECT_NE(refusal([&] { root.read_strings("names", 1); }).find("declares 2 strings"),
              std::string::npos);
    EXPECT_EQ(root.read_strings("names"), (std::vector<std::string>{"a", "b"}));
    std::remove(path.c_str());
    std::remove(other.c_str());
}
