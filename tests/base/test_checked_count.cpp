// Declared count ranges and checked arithmetic (src/base/checked_count.hpp): every failure is
// one config_error line naming the value, never a wrapped number.
#include "src/base/checked_count.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

using namespace ringscale;

namespace {
std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const config_error& e) {
        return e.what();
    }
    return "(no error)";
}
} // namespace

TEST(checked_count, range_is_checked_and_named) {
    EXPECT_EQ(count_in_range(5, 1, 8, "x"), 5);
    EXPECT_EQ(message_of([] { count_in_range(0, 1, max_ranks, "--at nodes"); }),
              "--at nodes: 0 is out of range (1 to 16777216 (2^24))");
    EXPECT_THROW(count_in_range(max_ranks + 1, 1, max_ranks, "x"), config_error);
}

TEST(checked_count, whole_numbers_from_doubles) {
    EXPECT_EQ(whole_in_range(8, 1, max_ranks, "ranks_per_node"), 8);
    for (const double bad :
         {3e9, 1e300, 2.5, 0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
        EXPECT_THROW(whole_in_range(bad, 1, max_ranks, "ranks_per_node"), config_error) << bad;
    EXPECT_EQ(message_of([] { whole_in_range(3e9, 1, max_ranks, "ranks_per_node"); }),
              "ranks_per_node: 3e+09 is out of range (1 to 16777216 (2^24))");
}

TEST(checked_count, parse_count_names_what_it_refuses) {
    EXPECT_EQ(parse_count("4K", 1, max_ranks, "--at P"), 4096);
    EXPECT_EQ(message_of([] { parse_count("18446744073709551615", 1, max_ranks, "--at P"); }),
              "--at P: 18446744073709551615 is out of range (1 to 16777216 (2^24))");
    EXPECT_EQ(message_of([] { parse_count("99999999999999999999999", 1, max_ranks, "--at P"); }),
              "--at P: 99999999999999999999999 is out of range (1 to 16777216 (2^24))");
    EXPECT_EQ(message_of([] { parse_count("-1", 1, max_ranks, "--at P"); }),
              "--at P: '-1' is not a whole number");
    EXPECT_EQ(message_of([] { parse_count("0", 1, max_ranks, "--at P"); }),
              "--at P: 0 is out of range (1 to 16777216 (2^24))");
}

TEST(checked_count, sums_and_products_refuse_to_wrap) {
    EXPECT_EQ(checked_sum(2, 3, "x"), 5);
    EXPECT_THROW(checked_sum(std::numeric_limits<std::int64_t>::max(), 1, "x"), config_error);
    EXPECT_THROW(checked_product(std::int64_t{1} << 62, std::int64_t{4}, "nodes x ranks"),
                 config_error);
}
