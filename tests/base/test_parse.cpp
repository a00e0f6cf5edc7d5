#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ringscale;

TEST(parse_size, suffixes_are_binary) {
    EXPECT_EQ(parse_size("64", "x"), 64u);
    EXPECT_EQ(parse_size("1K", "x"), 1024u);
    EXPECT_EQ(parse_size("16M", "x"), 16u << 20);
    EXPECT_EQ(parse_size("2G", "x"), 2ull << 30);
    EXPECT_EQ(parse_size(" 3k ", "x"), 3072u);
}

TEST(parse_size, rejects_malformed_and_negative) {
    EXPECT_THROW(parse_size("-1", "x"), config_error);
    EXPECT_THROW(parse_size("abc", "x"), config_error);
    EXPECT_THROW(parse_size("1Q", "x"), config_error);
    EXPECT_THROW(parse_size("", "x"), config_error);
    EXPECT_THROW(parse_size("99999999999999999999", "x"), config_error);
    EXPECT_THROW(parse_size("17179869184T", "x"), config_error);
}

TEST(parse_size, error_names_the_option) {
    try {
        parse_size("12x", "max-bytes");
        FAIL();
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("--max-bytes"), std::string::npos);
    }
}

TEST(split_list, trims_and_rejects_empty_items) {
    EXPECT_EQ(split_list("a, b ,c", "x"), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(split_list("one", "x"), (std::vector<std::string>{"one"}));
    EXPECT_THROW(split_list("a,,b", "x"), config_error);
    EXPECT_THROW(split_list("a,", "x"), config_error);
}

TEST(parse_numbers, int_double_bool) {
    EXPECT_EQ(parse_int("-42", "x"), -42);
    EXPECT_THROW(parse_int("4.2", "x"), config_error);
    EXPECT_DOUBLE_EQ(parse_double("2.5", "x"), 2.5);
    EXPECT_THROW(parse_double("nan", "x"), config_error);
    EXPECT_TRUE(parse_bool("on", "x"));
    EXPECT_FALSE(parse_bool("0", "x"));
    EXPECT_THROW(parse_bool("maybe", "x"), config_error);
}

TEST(format, sizes_and_times) {
    EXPECT_EQ(format_size(1024), "1K");
    EXPECT_EQ(format_size(16u << 20), "16M");
    EXPECT_EQ(format_size(1536), "1536");
    EXPECT_EQ(format_bytes(1536), "1.50 KiB");
    EXPECT_EQ(format_seconds(2.5e-6), "2.5 us");
    EXPECT_EQ(format_seconds(0.0125), "12.50 ms");
}

TEST(checked_product, overflow_is_one_line_not_a_wrapped_number) {
    EXPECT_EQ(checked_product(std::int64_t{1} << 40, std::int64_t{1} << 20, "x"),
              std::int64_t{1} << 60);
    EXPECT_EQ(checked_product(std::uint64_t{3}, std::uint64_t{5}, "x"), 15u);
    try {
        checked_product(std::int64_t{1} << 40, std::int64_t{1} << 30, "--tokens x ranks");
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_STREQ(e.what(), "--tokens x ranks: 1099511627776 x 1073741824 is too large");
    }
    EXPECT_THROW(checked_product(std::uint64_t{1} << 63, std::uint64_t{2}, "x"), config_error);
}

TEST(bytes_from_estimate, saturates_instead_of_wrapping) {
    EXPECT_EQ(bytes_from_estimate(1536.7), 1536u);
    EXPECT_EQ(bytes_from_estimate(-1), 0u);
    EXPECT_EQ(bytes_from_estimate(1e30), UINT64_MAX); // a cast would be undefined
    EXPECT_EQ(bytes_from_estimate(18446744073709551616.0), UINT64_MAX);
    EXPECT_EQ(bytes_from_estimate(std::nan("")), UINT64_MAX);
}

TEST(fnv1a64, known_vectors) {
    EXPECT_EQ(fnv1a64(""), 14695981039346656037ull);
    EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}
