#include "kernels/op_profile.hpp"
#include "kernels/parallel.hpp"
#include "kernels/threads.hpp"

#include <algorithm>
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

TEST(parallel, every_index_once_in_fixed_chunks) {
    const budget b(3);
    for (const std::size_t n : {1u, 7u, 1000u, 100003u}) {
        std::vector<std::atomic<int>> seen(n);
        const std::size_t size = chunk_size(n, 10), chunks = chunk_count(n, 10);
        std::vector<std::size_t> starts(chunks, n + 1);
        parallel_for_chunks(n, 10, [&](std::size_t c, std::size_t begin, std::size_t end) {
            starts[c] = begin;
            EXPECT_EQ(end, std::min(n, begin + size));
            for (std::size_t i = begin; i < end; ++i)
                ++seen[i];
        });
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(seen[i].load(), 1) << "n=" << n << " i=" << i;
        for (std::size_t c = 0; c < chunks; ++c)
            EXPECT_EQ(starts[c], c * size) << "n=" << n;
    }
}

TEST(parallel, chunks_follow_grain_and_the_cap) {
    EXPECT_EQ(chunk_count(100, 1000), 1u); // too small to split
    EXPECT_EQ(chunk_count(2500, 1000), 3u);
    EXPECT_EQ(chunk_size(2500, 1000), 1000u);
    EXPECT_EQ(chunk_count(std::size_t{1} << 30, 1), max_chunks); // capped
    EXPECT_EQ(chunk_count(0, 1), 0u);
    int calls = 0;
    parallel_for(0, 1, [&](std::size_t, std::size_t) { ++calls; });
    EXPECT_EQ(calls, 0); // nothing to do, nothing called
}

TEST(parallel, same_chunks_with_any_thread_count) {
    std::vector<std::vector<std::size_t>> seen;
    for (const int threads : {1, 2, 5}) {
        std::vector<std::size_t> starts(chunk_count(5000, 64));
        parallel_for_chunks(
            5000, 64, [&](std::size_t c, std::size_t begin, std::size_t) { starts[c] = begin; },
            threads);
        seen.push_back(starts);
    }
    EXPECT_EQ(seen[0], seen[1]);
    EXPECT_EQ(seen[0], seen[2]);
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
