// A mask's arrays on an executor (kernels/dev_mask.hpp), on the CPU executor: the view keeps
// the mask's rules and host arrays, and its "device" arrays are the host ones (the CPU
// executor's memory is host memory). The CUDA upload is checked in
// tests/kernels/cuda/test_dev_mask_gpu.cpp.
#include "kernels/dev_mask.hpp"
#include "kernels/executor.hpp"

#include <gtest/gtest.h>

#include <memory>

using namespace ringscale::kernels;
using ringscale::device_kind;

TEST(dev_mask, no_mask_is_no_rule) {
    const auto exec = make_executor(device_kind::cpu);
    const dev_mask none(*exec, nullptr);
    EXPECT_FALSE(mask_active(none.view()));
    EXPECT_FALSE(mask_active(dev_mask().view()));
}

TEST(dev_mask, cpu_view_is_the_mask_with_host_arrays_on_both_sides) {
    const auto exec = make_executor(device_kind::cpu);
    mask_spec spec;
    spec.window = 64;
    spec.docs = "fixed:300";
    spec.sparsity = 0.5;
    spec.block = 32;
    spec.dilation = "64:2";
    const auto mask = std::make_shared<const attention_mask>(spec, 1000, true);
    const dev_mask dm(*exec, mask);
    const mask_view v = dm.view(), want = mask->view();
    EXPECT_EQ(v.window, 64);
    EXPECT_EQ(v.docs, want.docs);
    EXPECT_EQ(v.doc_start, mask->doc_starts().data());
    EXPECT_EQ(v.doc_start_dev, v.doc_start);
    EXPECT_EQ(v.block, 32);
    EXPECT_EQ(v.blocks, want.blocks);
    EXPECT_EQ(v.keep, mask->keep().data());
    EXPECT_EQ(v.keep_dev, v.keep);
    EXPECT_EQ(v.dilations, 1);
    EXPECT_EQ(v.segment[0], 64);
    EXPECT_EQ(v.rate[0], 2);
}
