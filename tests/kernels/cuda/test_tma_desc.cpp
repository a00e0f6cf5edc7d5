// kernels/cuda/tma_desc: the host-side checks of cuTensorMapEncodeTiled's rules refuse a bad
// tensor with config_error before the driver is asked (so no GPU is needed). CUDA builds.
#include "kernels/cuda/tma_desc.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace kc = ringscale::kernels::cuda;

namespace {

/// A valid [4][256][64] bf16 view with boxes of 128 x 64 (as the attention kernels use),
/// at a fake but 16-byte aligned address: every test breaks one rule of it.
kc::tma_tensor valid_tensor() {
    kc::tma_tensor t;
    t.base = reinterpret_cast<const void*>(std::uintptr_t{1} << 20);
    t.rank = 3;
    t.dims[0] = 64;
    t.dims[1] = 256;
    t.dims[2] = 4;
    t.strides_bytes[0] = 64 * 2;
    t.strides_bytes[1] = 256 * 64 * 2;
    t.box[0] = 64;
    t.box[1] = 128;
    t.box[2] = 1;
    return t;
}

void expect_refused(const kc::tma_tensor& t, const char* what) {
    EXPECT_THROW(kc::make_tma_desc(kc::attn_dtype::bf16, t), ringscale::config_error) << what;
}

} // namespace

TEST(tma_desc, refuses_what_cuTensorMapEncodeTiled_refuses) {
    auto t = valid_tensor();
    t.base = reinterpret_cast<const void*>((std::uintptr_t{1} << 20) + 8);
    expect_refused(t, "base not 16-byte aligned");
    t = valid_tensor();
    t.rank = 6;
    expect_refused(t, "rank 6");
    t = valid_tensor();
    t.box[0] = 65;
    expect_refused(t, "inner box 130 bytes > the 128-byte swizzle");
    t = valid_tensor();
    t.box[0] = 4;
    expect_refused(t, "inner box 8 bytes, not a multiple of 16");
    t = valid_tensor();
    t.box[1] = 257;
    expect_refused(t, "box extent 257");
    t = valid_tensor();
    t.dims[1] = 0;
    expect_refused(t, "empty extent");
    t = valid_tensor();
    t.dims[2] = (std::uint64_t{1} << 32) + 1;
    expect_refused(t, "extent above 2^32");
    t = valid_tensor();
    t.strides_bytes[0] = 120;
    expect_refused(t, "stride not a multiple of 16");
    t = valid_tensor();
    t.strides_bytes[1] = std::uint64_t{1} << 40;
    expect_refused(t, "stride 2^40");
}
