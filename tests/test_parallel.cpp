#include "kernels/op_profile.hpp"
#include "kernels/parallel.hpp"
#include "kernels/threads.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ringscale::kernels;

namespace {
// Sets the thread budget for one test and restores it.
struct budget {
    explicit budget(int n) : m_saved(blas_threads()) { set_blas_threads(n); }
    ~budget() { set_blas_threads(m_saved); }
    int m_saved;
};
} // namespace

TEST(parallel, every_index_once_in_contiguous_ranges) {
    const budget b(3);
    for (const std::size_t n : {1u, 7u, 1000u, 100003u}) {
        std::vector<std::atomic<int>> seen(n);
        std::vector<std::size_t> starts(4, n + 1);
        parallel_for_ranges(n, 10, [&](std::size_t k, std::size_t begin, std::size_t end) {
            starts[k] = begin;
            for (std::size_t i = begin; i < end; ++i)
                ++seen[i];
        });
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(seen[i].load(), 1) << "n=" << n << " i=" << i;
        const auto r = static_cast<std::size_t>(parallel_ranges(n, 10));
        for (std::size_t k = 0; k < r; ++k)
            EXPECT_EQ(starts[k], n * k / r) << "n=" << n;
    }
}

TEST(parallel, range_count_follows_budget_and_grain) {
    const budget b(4);
    EXPECT_EQ(parallel_ranges(100, 1000), 1); // too small to split
    EXPECT_EQ(parallel_ranges(2500, 1000), 2);
    EXPECT_EQ(parallel_ranges(1 << 20, 1000), 4);
    EXPECT_EQ(parallel_ranges(0, 1), 1);
    int calls = 0;
    parallel_for(0, 1, [&](std::size_t, std::size_t) { ++calls; });
    EXPECT_EQ(calls, 0); // nothing to do, nothing called
}

TEST(parallel, reuses_workers_across_many_calls) {
    const budget b(2);
    std::atomic<long> total{0};
    for (int rep = 0; rep < 2000; ++rep)
        parallel_for(64, 1, [&](std::size_t begin, std::size_t end) {
            total += static_cast<long>(end - begin);
        });
    EXPECT_EQ(total.load(), 2000L * 64);
}

TEST(op_profile, scopes_add_time_and_calls_only_when_attached) {
    op_profile p;
    { const op_profile::scope s(&p, op_kind::gelu_fwd); }
    { const op_profile::scope s(&p, op_kind::gelu_fwd); }
    { const op_profile::scope s(nullptr, op_kind::qkv_fwd); }
    EXPECT_EQ(p.calls(op_kind::gelu_fwd), 2);
    EXPECT_GE(p.seconds(op_kind::gelu_fwd), 0.0);
    EXPECT_EQ(p.calls(op_kind::qkv_fwd), 0);
    p.add(op_kind::optimizer, 0.5);
    EXPECT_DOUBLE_EQ(p.total_s(), p.seconds(op_kind::gelu_fwd) + 0.5);
}

TEST(op_profile, names_are_unique_and_snake_case) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < op_kinds; ++i)
        names.emplace_back(op_name(static_cast<op_kind>(i)));
    EXPECT_EQ(names.front(), "embedding_fwd");
    EXPECT_EQ(names.back(), "communication");
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_NE(names[i], "unknown");
        EXPECT_EQ(names[i].find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"),
                  std::string::npos);
        for (std::size_t j = 0; j < i; ++j)
            EXPECT_NE(names[i], names[j]);
    }
}
