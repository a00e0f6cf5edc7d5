// The dtype table (src/base/dtype_names.hpp): every spelling the launcher writes or --dtype
// takes, the unit roundoffs, and the accuracy allowances by dtype and P.
#include "src/base/dtype_names.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace ringscale;

TEST(dtype_names, both_spellings_name_one_row) {
    for (const auto& [a, b] : {std::pair{"float32", "fp32"},
                               {"bfloat16", "bf16"},
                               {"float16", "fp16"},
                               {"float8_e4m3", "fp8_e4m3"},
                               {"float8_e5m2", "fp8_e5m2"},
                               {"fp8", "fp8"}}) {
        ASSERT_NE(dtypes::find(a), nullptr) << a;
        EXPECT_EQ(dtypes::find(a), dtypes::find(b)) << a << " " << b;
    }
    for (const char* unknown : {"FP32", "float64", "fp64", "", "bf16 ", "int8"})
        EXPECT_EQ(dtypes::find(unknown), nullptr) << unknown;
    EXPECT_EQ(dtypes::spellings().size(), 11u); // fp8 has one spelling
}

TEST(dtype_names, unit_roundoffs_and_bytes) {
    EXPECT_EQ(dtypes::find("fp32")->unit_roundoff, 0x1p-24);
    EXPECT_EQ(dtypes::find("bf16")->unit_roundoff, 0x1p-8);
    EXPECT_EQ(dtypes::find("fp16")->unit_roundoff, 0x1p-11);
    EXPECT_EQ(dtypes::find("fp8_e4m3")->unit_roundoff, 0x1p-4);
    EXPECT_EQ(dtypes::find("fp8_e5m2")->unit_roundoff, 0x1p-3);
    EXPECT_EQ(dtypes::find("fp8")->unit_roundoff, 0x1p-4); // the recipe, as E4M3
    EXPECT_EQ(dtypes::find("float32")->bytes, 4);
    EXPECT_EQ(dtypes::find("bfloat16")->bytes, 2);
    EXPECT_EQ(dtypes::find("fp8")->bytes, 1);
}

TEST(dtype_names, allowances_follow_pytorch_and_scale_for_fp8) {
    EXPECT_DOUBLE_EQ(dtypes::accuracy_allowance(*dtypes::find("fp32"), 64), 1e-5);
    EXPECT_DOUBLE_EQ(dtypes::accuracy_allowance(*dtypes::find("bf16"), 4), 4e-3);
    EXPECT_DOUBLE_EQ(dtypes::accuracy_allowance(*dtypes::find("fp16"), 0), 1e-3); // P >= 1
    EXPECT_DOUBLE_EQ(dtypes::accuracy_allowance(*dtypes::find("fp8_e4m3"), 2), 2e-3 * 16);
    EXPECT_DOUBLE_EQ(dtypes::accuracy_allowance(*dtypes::find("fp8_e5m2"), 1), 1e-3 * 32);
    EXPECT_NE(dtypes::describe_allowances().find("bf16 and fp16 0.001 x P"), std::string::npos)
        << dtypes::describe_allowances();
}

TEST(dtype_names, the_reader_enumerates_the_same_spellings) {
    const auto* allowed = schema::allowed_values(schema::attr::dtype);
    ASSERT_NE(allowed, nullptr);
    EXPECT_EQ(*allowed, dtypes::spellings());
    EXPECT_EQ(std::count(allowed->begin(), allowed->end(), "float64"), 0);
}
