#include "analysis/measures/peak.hpp"
#include "analysis/measures/summary.hpp"
#include "analysis/presentation/views.hpp"
#include "analysis/reading/reader.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>

using namespace ringscale::analysis;
using ringscale::test_fixture::fixture_case;
using ringscale::test_fixture::fixture_file;

namespace {

double peak_of(const std::string& name, const std::string& dtype) {
    const auto p = gpu_dense_peak(name, dtype);
    return p ? p->tflops : -1.0;
}

/// A case in memory: device and dtype attributes, /meta device_name.
case_data memory_case(const std::string& device, const std::string& name,
                      const std::string& mfu_dtype) {
    auto file = std::make_shared<file_info>();
    file->meta["device_name"] = attr_value{name, std::nullopt, false};
    case_data c;
    c.file = file;
    c.attrs["device"] = attr_value{device, std::nullopt, false};
    c.attrs["mfu_dtype"] = attr_value{mfu_dtype, std::nullopt, false};
    return c;
}

} // namespace

TEST(analysis_peak, dtype_names) {
    EXPECT_EQ(mfu_dtype_of("bfloat16"), "bf16");
    EXPECT_EQ(mfu_dtype_of("BF16"), "bf16");
    EXPECT_EQ(mfu_dtype_of("float16"), "fp16");
    EXPECT_EQ(mfu_dtype_of("half"), "fp16");
    EXPECT_EQ(mfu_dtype_of("tf32"), "tf32");
    EXPECT_EQ(mfu_dtype_of("float32"), "fp32");
    EXPECT_EQ(mfu_dtype_of(""), "fp32");
    EXPECT_EQ(mfu_dtype_of("FP8"), "fp8");
    EXPECT_EQ(mfu_dtype_of("float8_e4m3fn"), "fp8");
    EXPECT_EQ(mfu_dtype_of("e4m3"), "fp8");
}

// fp8 GEMMs (Hopper, Ada) against the datasheets' fp8 figures: half the "with sparsity" one.
TEST(analysis_peak, fp8_datasheet_figures) {
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 80GB HBM3", "fp8"), 1979.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 PCIe", "fp8"), 1513.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 NVL", "fp8"), 1670.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H200", "fp8"), 1979.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H200 NVL", "fp8"), 1670.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA L40S", "float8"), 733.0);
    EXPECT_FALSE(gpu_dense_peak("NVIDIA A100-SXM4-80GB", "fp8")); // no fp8 unit
    // Twice the bf16 peak on the SXM and PCIe parts: one tensor-core pass does twice the FLOPs
    // (the NVL datasheets round theirs: 3,341 and 1,671).
    for (const char* name : {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200"})
        EXPECT_DOUBLE_EQ(peak_of(name, "fp8"), 2 * peak_of(name, "bf16")) << name;
    // MFU of an fp8 step is taken against the fp8 peak, not the bf16 one.
    const mfu_figure f =
        case_mfu(memory_case("cuda", "NVIDIA H100 80GB HBM3", "fp8"), 989.5e12, std::nullopt);
    ASSERT_TRUE(f.percent);
    EXPECT_DOUBLE_EQ(*f.percent, 50.0);
    EXPECT_EQ(f.peak->dtype, "fp8");
}

TEST(analysis_peak, datasheet_figures_by_cuda_device_name) {
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 80GB HBM3", "bf16"), 989.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 80GB HBM3", "tf32"), 494.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 80GB HBM3", "float32"), 67.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 PCIe", "fp16"), 756.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 PCIe", "tf32"), 378.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 PCIe", "fp32"), 51.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H100 NVL", "bf16"), 835.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H200", "bfloat16"), 989.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA H200 NVL", "bf16"), 835.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA A100-SXM4-80GB", "bf16"), 312.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA A100-SXM4-40GB", "tf32"), 156.0);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA A100 80GB PCIe", "fp32"), 19.5);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA L40S", "fp16"), 362.05);
    EXPECT_DOUBLE_EQ(peak_of("NVIDIA L40S", "tf32"), 183.0);
    EXPECT_EQ(gpu_dense_peak("NVIDIA H100 PCIe", "bf16")->part, "H100 PCIe");
    EXPECT_EQ(gpu_dense_peak("NVIDIA H100 80GB HBM3", "bf16")->part, "H100 SXM");
}

TEST(analysis_peak, unknown_parts_and_dtypes_have_no_peak) {
    EXPECT_FALSE(gpu_dense_peak("NVIDIA L40", "bf16"));         // not the L40S
    EXPECT_FALSE(gpu_dense_peak("NVIDIA GH200 480GB", "bf16")); // a word match only
    EXPECT_FALSE(gpu_dense_peak("NVIDIA H100 80GB HBM3", "fp64"));
    EXPECT_FALSE(gpu_dense_peak("", "bf16"));
}

TEST(analysis_peak, case_mfu_from_the_table_the_override_or_a_note) {
    const case_data h100 = memory_case("cuda", "NVIDIA H100 80GB HBM3", "bf16");
    const mfu_figure half = case_mfu(h100, 494.75e12, std::nullopt);
    ASSERT_TRUE(half.percent);
    EXPECT_DOUBLE_EQ(*half.percent, 50.0);
    EXPECT_EQ(half.peak->part, "H100 SXM");
    EXPECT_TRUE(half.note.empty());
    const mfu_figure stated = case_mfu(h100, 25e12, 100.0);
    EXPECT_DOUBLE_EQ(*stated.percent, 25.0);
    EXPECT_EQ(stated.peak->part, "--peak");
    EXPECT_FALSE(case_mfu(h100, std::nullopt, std::nullopt).percent);

    const mfu_figure unknown =
        case_mfu(memory_case("cuda", "Example GPU", "bf16"), 1e12, std::nullopt);
    EXPECT_FALSE(unknown.percent);
    EXPECT_EQ(unknown.note,
              "MFU: no dense bf16 peak known for device 'Example GPU'; pass --peak TFLOPS");
    EXPECT_DOUBLE_EQ(*case_mfu(memory_case("cuda", "Example GPU", "bf16"), 1e12, 4.0).percent,
                     25.0);

    const mfu_figure cpu = case_mfu(memory_case("cpu", "Intel Xeon", "fp32"), 1e12, std::nullopt);
    EXPECT_FALSE(cpu.percent);
    EXPECT_TRUE(cpu.note.empty());
}

TEST(analysis_peak, summary_and_table_show_mfu_of_a_known_gpu_case) {
    // Two ranks, every iteration 1 ms: FLOP/s per rank = 989.5e9 / 1e-3 / 2 = 494.75e12, half
    // of the H100 SXM's dense bf16 peak (989.5 TFLOP/s).
    fixture_case c;
    c.world_size = 2;
    c.warmup = 1;
    c.iterations = 6;
    c.explicit_time_s.assign(14, 1e-3);
    c.text_params = {
        {"device", "cuda"}, {"comm", "nccl"}, {"dtype", "bfloat16"}, {"mfu_dtype", "bf16"}};
    c.float_params = {{"flops_per_iter", 989.5e9}};
    fixture_file f;
    f.device_name = "NVIDIA H100 80GB HBM3";
    f.cases = {c};
    const std::string dir = ringscale::test_fixture::fixture_dir("peak_summary");
    write_fixture_file(dir + "/f.h5", f);
    const result_set rs = load_results({dir}, false);
    const auto pooled = pool_cases(rs.cases);
    const case_summary s = summarize(pooled.at(0), {});
    ASSERT_TRUE(s.mfu_percent);
    EXPECT_NEAR(*s.mfu_percent, 50.0, 1e-9);
    const table t = summary_table({s});
    const auto col = std::find(t.keys.begin(), t.keys.end(), "mfu_pct") - t.keys.begin();
    ASSERT_LT(static_cast<std::size_t>(col), t.keys.size());
    EXPECT_EQ(t.titles[static_cast<std::size_t>(col)], "MFU %");
    EXPECT_EQ(t.rows.at(0)[static_cast<std::size_t>(col)].text, "50.0");
    std::filesystem::remove_all(dir);
}
