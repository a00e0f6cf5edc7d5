// The Hopper attention forward's GPU-free arithmetic (kernels/cuda/attention_fwd_sm90_plan.hpp):
// the shapes the kernel takes, the shared-memory map, and the wgmma operand byte offsets
// checked on an emulated shared memory against the PTX ISA's canonical layouts. Runs on every
// build (no CUDA).
#include "kernels/cuda/attention_fwd_sm90_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace ringscale::kernels;
namespace fwd90 = ringscale::kernels::cuda::fwd90;

TEST(attention_fwd_sm90_plan, supported_shapes) {
    attention_shape s;
    s.batch = 2;
    s.heads = 16;
    s.kv_heads = 4;
    s.q_len = 4096;
    s.k_len = 4096;
    for (const int d : {64, 128}) {
        s.head_dim = d;
        EXPECT_TRUE(fwd90::supported(s)) << d;
    }
    for (const int d : {32, 96, 256}) {
        s.head_dim = d;
        EXPECT_FALSE(fwd90::supported(s)) << d;
    }
    s.head_dim = 64;
    s.batch = 65536 / 16; // batch * heads = 65536 grid rows: one too many
    EXPECT_FALSE(fwd90::supported(s));
    s.batch = 65535 / 16;
    EXPECT_TRUE(fwd90::supported(s));
    s.batch = 1;
    s.q_len = std::int64_t{1} << 31; // beyond TMA's int32 coordinates
    EXPECT_FALSE(fwd90::supported(s));
    s.q_len = 4096;
    s.k_len = std::int64_t{1} << 31;
    EXPECT_FALSE(fwd90::supported(s));
}
