// A mask's arrays on the CUDA executor (kernels/dev_mask.hpp): copies of the host arrays, made
// once, and a mask without them refused by the kernels. The masked kernels themselves:
// test_attention_mask_gpu.cpp; the CPU executor's view: tests/kernels/test_dev_mask.cpp. Every
// test skips without a device.
#include "kernels/dev_mask.hpp"
#include "kernels/executor.hpp"
#include "kernels/mask_spec.hpp"
#include "src/base/error.hpp"
#include "tests/kernels/cuda/attention_gpu_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

using namespace ringscale::kernels;
using namespace ringscale::test_attention;

// The mask's arrays on the CUDA executor: copies of the host arrays, made once.
TEST(gpu_dev_mask, uploads_the_arrays_once) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    const auto exec = make_executor(ringscale::device_kind::cuda);
    mask_spec spec;
    spec.docs = "fixed:70";
    spec.sparsity = 0.5;
    spec.block = 16;
    const auto mask = std::make_shared<const attention_mask>(spec, 300, true);
    const dev_mask dm(*exec, mask);
    const mask_view a = dm.view(), b = dm.view();
    ASSERT_NE(a.doc_start_dev, nullptr);
    ASSERT_NE(a.keep_dev, nullptr);
    EXPECT_NE(a.doc_start_dev, a.doc_start); // device memory, not the host array
    EXPECT_EQ(a.doc_start_dev, b.doc_start_dev);
    EXPECT_EQ(a.keep_dev, b.keep_dev);
    std::vector<std::int64_t> starts(mask->doc_starts().size());
    std::vector<std::uint8_t> keep(mask->keep().size());
    rt::copy_device_to_host(starts.data(), a.doc_start_dev, starts.size() * sizeof(starts[0]));
    rt::copy_device_to_host(keep.data(), a.keep_dev, keep.size());
    EXPECT_EQ(starts, mask->doc_starts());
    EXPECT_EQ(keep, mask->keep());
}

// A mask whose arrays have no device copy is refused, not read from host memory.
TEST(gpu_dev_mask, a_mask_without_device_arrays_is_refused) {
    RINGSCALE_SKIP_WITHOUT_DEVICE();
    mask_spec spec;
    spec.docs = "fixed:64";
    const attention_mask mask(spec, 128, true);
    attention_shape s = make_shape(128, 128, 64, true);
    s.mask = mask.view(); // host pointers only
    rt::device_buffer<std::uint16_t> x(static_cast<std::size_t>(attention_q_elems(s)));
    rt::device_buffer<float> o(x.size()), lse(static_cast<std::size_t>(s.batch * s.heads * 128));
    EXPECT_THROW(kc::attention_fwd_cuda(s, attn_dtype::bf16, x.data(), x.data(), x.data(), {},
                                        o.data(), lse.data()),
                 ringscale::config_error);
}
