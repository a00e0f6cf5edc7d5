// kernels/model/fp8_scales: the fp8 per-tensor scale bookkeeping every backend shares. Over 20
// steps of a recorded amax history (seeded, with an all-zero step, a spike and a NaN), the
// scales against TransformerEngine's rule computed here independently, and the CPU
// emulation (kernels/model/mixed_precision) quantising with the very same scales.
#include "kernels/model/fp8_scales.hpp"
#include "kernels/model/mixed_precision.hpp"

#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;

namespace {

constexpr int steps = 20, layers = 1, history = 4;
constexpr std::size_t sites = 4 * layers + 1, slots = 3 * sites;

// amax[step][slot] of this rank, and of "another rank" (what the reduction maxes in): seeded
// magnitudes over four decades, step 6 all zero, a spike at step 11, a NaN at step 15 slot 2.
struct recorded {
    std::vector<std::vector<float>> mine, other;
};

recorded record_history() {
    recorded r;
    for (int s = 0; s < steps; ++s) {
        std::vector<float> a(slots), b(slots);
        for (std::size_t k = 0; k < slots; ++k) {
            const std::uint64_t at = static_cast<std::uint64_t>(s) * slots + k;
            a[k] = std::pow(10.0f, 4.0f * uniform_at(7, at) - 2.0f);
            b[k] = std::pow(10.0f, 4.0f * uniform_at(8, at) - 2.0f);
        }
        if (s == 6)
            std::fill(a.begin(), a.end(), 0.0f), std::fill(b.begin(), b.end(), 0.0f);
        if (s == 11)
            a[4] = 3.0e4f;
        if (s == 15)
            b[2] = NAN;
        r.mine.push_back(a);
        r.other.push_back(b);
    }
    return r;
}

fp8_format format_of_slot(std::size_t k) {
    return fp8_format_of(static_cast<gemm_operand>(k % 3));
}

// TE's delayed rule written out: fp8_max / max over the last `history` reduced steps (NaN
// ignored by max as std::max(x, NaN) keeps x), 1 when that is 0.
float expected_scale(const recorded& r, int after_step, std::size_t k) {
    float m = 0;
    for (int s = std::max(0, after_step - history + 1); s <= after_step; ++s)
        m = std::max(m, std::max(r.mine[static_cast<std::size_t>(s)][k],
                                 r.other[static_cast<std::size_t>(s)][k]));
    return m > 0 && std::isfinite(m) ? fp8_max(format_of_slot(k)) / m : 1.0f;
}

// The reduction over "two ranks": the max of ours and the other's recorded amax.
auto reduce_with(const std::vector<float>& other) {
    return [&other](float* amax, std::size_t n) {
        ASSERT_EQ(n, slots);
        for (std::size_t k = 0; k < n; ++k)
            amax[k] = std::max(amax[k], other[k]);
    };
}

} // namespace

TEST(fp8_scales, same_scales_over_20_steps_of_a_recorded_amax_history) {
    const recorded r = record_history();
    fp8_scales book;
    book.configure(sites, fp8_scaling::delayed, history);
    precision_config c;
    c.dtype = train_dtype::fp8;
    c.amax_history = history;
    mixed_precision emul;
    emul.configure(c, layers);
    for (std::size_t k = 0; k < slots; ++k)
        EXPECT_EQ(book.scale(k, 0, format_of_slot(k)), 1.0f); // no history yet
    int checked = 0;
    for (int s = 0; s < steps; ++s) {
        const auto& mine = r.mine[static_cast<std::size_t>(s)];
        for (std::size_t k = 0; k < slots; ++k) {
            const auto site = static_cast<int>(k / 3);
            const auto op = static_cast<gemm_operand>(k % 3);
            // The emulation sees a tensor whose amax is the recorded one; it quantises with
            // the scale the book holds before this step's amaxes join the history.
            const float s_book = book.scale(k, mine[k], format_of_slot(k));
            const std::vector<float> t = {mine[k], -0.37f * mine[k], 0.0f};
            const float* q = emul.gemm_input(site, op, t.data(), t.size());
            EXPECT_EQ(q[1], round_to_fp8(format_of_slot(k), t[1] * s_book) / s_book)
                << "step " << s << " slot " << k;
            book.record(k, mine[k]);
        }
        EXPECT_EQ(book.step_amax(), mine);
        book.end_step(reduce_with(r.other[static_cast<std::size_t>(s)]));
        emul.end_step(reduce_with(r.other[static_cast<std::size_t>(s)]));
        for (std::size_t k = 0; k < slots; ++k) {
            const float want = expected_scale(r, s, k);
            const auto site = static_cast<int>(k / 3);
            const auto op = static_cast<gemm_operand>(k % 3);
            EXPECT_EQ(book.scale(k, 123.0f, format_of_slot(k)), want) << s << " " << k;
            EXPECT_EQ(emul.delayed_scale(site, op), want) << s << " " << k;
            ++checked;
        }
    }
    EXPECT_EQ(checked, steps * static_cast<int>(slots));
    // The history forgets: 4 steps after the spike the slot's scale is back up.
    EXPECT_LT(expected_scale(r, 11, 4), expected_scale(r, 15, 4));
    EXPECT_EQ(expected_scale(r, 6, 0),
              fp8_max(fp8_format::e4m3) / std::max({r.mine[3][0], r.other[3][0], r.mine[4][0],
                                                    r.other[4][0], r.mine[5][0], r.other[5][0]}));
}

TEST(fp8_scales, current_scaling_uses_the_tensor_and_keeps_no_history) {
    fp8_scales book;
    book.configure(2, fp8_scaling::current, 1);
    EXPECT_EQ(book.scale(0, 2.0f, fp8_format::e4m3), 224.0f);
    EXPECT_EQ(book.scale(2, 57344.0f, fp8_format::e5m2), 1.0f);
    EXPECT_EQ(book.scale(1, 0.0f, fp8_format::e4m3), 1.0f);
    EXPECT_EQ(book.scale(1, INFINITY, fp8_format::e4m3), 1.0f);
    book.record(0, 5.0f);
    book.end_step({});
    EXPECT_EQ(book.step_amax()[0], 5.0f); // current scaling keeps no history
    EXPECT_EQ(book.slot(1, gemm_operand::dy), 5u);
    EXPECT_THROW(book.slot(2, gemm_operand::x), std::logic_error);
    EXPECT_THROW(book.configure(1, fp8_scaling::delayed, 0), config_error);
}
