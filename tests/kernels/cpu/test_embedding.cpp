// embedding: gather forward, scatter-add backward against central finite differences in double,
// accumulation over repeated ids and across calls, and out-of-range ids.
#include "kernels/cpu/embedding.hpp"
#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

namespace {
std::vector<float> seeded(std::size_t n, std::uint64_t seed) {
    std::vector<float> v(n);
    fill_uniform(v.data(), n, seed, 0);
    return v;
}
} // namespace

TEST(embedding, forward_gathers_rows) {
    const std::size_t vocab = 7, dim = 5;
    const auto table = seeded(vocab * dim, 1);
    const std::vector<std::int32_t> ids{3, 0, 6, 3};
    std::vector<float> out(ids.size() * dim, std::numeric_limits<float>::quiet_NaN());
    embedding_fwd(ids.size(), vocab, dim, table.data(), ids.data(), out.data());
    for (std::size_t t = 0; t < ids.size(); ++t)
        for (std::size_t j = 0; j < dim; ++j)
            EXPECT_EQ(out[t * dim + j], table[ids[t] * dim + j]) << t << "," << j;
}

TEST(embedding, backward_matches_central_differences) {
    const std::size_t vocab = 4, dim = 3;
    const std::vector<std::int32_t> ids{2, 0, 2, 1, 2}; // id 3 absent, id 2 three times
    const auto tf = seeded(vocab * dim, 11), rf = seeded(ids.size() * dim, 12);
    std::vector<float> dtable(tf.size(), 0.0f);
    embedding_bwd(ids.size(), vocab, dim, ids.data(), rf.data(), dtable.data());

    std::vector<double> table(tf.begin(), tf.end());
    auto loss = [&] { // L = Σ r[t, j] · table[ids[t], j]
        double l = 0.0;
        for (std::size_t t = 0; t < ids.size(); ++t)
            for (std::size_t j = 0; j < dim; ++j)
                l += rf[t * dim + j] * table[ids[t] * dim + j];
        return l;
    };
    const double h = 1e-6;
    for (std::size_t k = 0; k < table.size(); ++k) {
        const double saved = table[k];
        table[k] = saved + h;
        const double up = loss();
        table[k] = saved - h;
        const double down = loss();
        table[k] = saved;
        // The loss is linear in the table: the difference is exact up to double rounding.
        EXPECT_NEAR(dtable[k], (up - down) / (2.0 * h), 1e-6) << "dtable " << k;
    }
    for (std::size_t j = 0; j < dim; ++j)
        EXPECT_EQ(dtable[3 * dim + j], 0.0f); // absent id: untouched
}

TEST(embedding, backward_accumulates_into_existing_gradient) {
    const std::size_t vocab = 3, dim = 2;
    const std::vector<std::int32_t> ids{1, 1};
    const std::vector<float> dout{1.0f, 2.0f, 0.5f, 0.25f};
    std::vector<float> dtable{10.0f, 20.0f, 30.0f, 40.0f, 50.0f, 60.0f};
    embedding_bwd(ids.size(), vocab, dim, ids.data(), dout.data(), dtable.data());
    embedding_bwd(ids.size(), vocab, dim, ids.data(), dout.data(), dtable.data());
    EXPECT_EQ(dtable, (std::vector<float>{10.0f, 20.0f, 33.0f, 44.5f, 50.0f, 60.0f}));
}

TEST(embedding, out_of_range_ids_are_config_errors_and_write_nothing) {
    const std::size_t vocab = 3, dim = 2;
    const std::vector<float> table(vocab * dim, 1.0f), dout(4, 1.0f);
    std::vector<float> out(4, 0.0f), dtable(vocab * dim, 0.0f);
    for (const std::vector<std::int32_t>& ids :
         {std::vector<std::int32_t>{0, 3}, std::vector<std::int32_t>{-1, 0}}) {
        EXPECT_THROW(embedding_fwd(2, vocab, dim, table.data(), ids.data(), out.data()),
                     ringscale::config_error);
        EXPECT_THROW(embedding_bwd(2, vocab, dim, ids.data(), dout.data(), dtable.data()),
                     ringscale::config_error);
    }
    EXPECT_EQ(out, std::vector<float>(4, 0.0f));
    EXPECT_EQ(dtable, std::vector<float>(vocab * dim, 0.0f));
    const std::vector<std::int32_t> ok{0, 1};
    EXPECT_THROW(embedding_fwd(2, vocab, 0, table.data(), ok.data(), out.data()),
                 ringscale::config_error);
}
