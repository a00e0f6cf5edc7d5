// The fallback table (kernels/cudnn_support.hpp), no GPU: every mask kind x dtype x compute
// capability x cuDNN version row gives a kernel and a reason; cuDNN's known-bad versions are
// refused under --attn-kernel cudnn and named under auto.
#include "kernels/cudnn_support.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace ringscale;
using namespace ringscale::kernels;

namespace {

const attn_mask_kind masks[] = {attn_mask_kind::none,         attn_mask_kind::causal,
                                attn_mask_kind::window,       attn_mask_kind::documents,
                                attn_mask_kind::block_sparse, attn_mask_kind::dilated};
const attn_dtype_kind dtypes[] = {attn_dtype_kind::fp32, attn_dtype_kind::bf16,
                                  attn_dtype_kind::fp16, attn_dtype_kind::fp8};
const int ccs[][2] = {{7, 5}, {8, 0}, {8, 9}, {9, 0}, {10, 0}};
const int versions[] = {0, 80900, 90000, 90100, 91000, 91001, 91002, 91400, 91401, 91900};

// The table's answer, written out independently of the implementation's order of checks.
bool expect_supported(const attn_case_traits& c) {
    const bool half = c.dtype == attn_dtype_kind::bf16 || c.dtype == attn_dtype_kind::fp16;
    const bool fp8 = c.dtype == attn_dtype_kind::fp8;
    if (c.mask == attn_mask_kind::block_sparse || c.mask == attn_mask_kind::dilated)
        return false;
    if (c.cc_major < 8 || c.dtype == attn_dtype_kind::fp32 || (fp8 && c.cc_major < 9))
        return false;
    const int v = c.cudnn_version;
    if (v < 90000 || (half && (v == 91000 || v == 91001)) || (fp8 && (v < 90100 || v == 91000)))
        return false;
    return !(v == 91400 && c.mask == attn_mask_kind::window && !c.causal && c.k_len > 1024);
}

} // namespace

// One row: cuDNN's verdict as written out above; under auto our kernels with a note (cuDNN's
// reason where it cannot take the case); by name cuDNN, or refused with the same reason.
// True when cuDNN takes the row.
static bool check_row(const attn_case_traits& c) {
    const std::string why = cudnn_unsupported_reason(c);
    EXPECT_EQ(why.empty(), expect_supported(c)) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
    const auto a = choose_attention_kernel(c, attn_path::automatic, true, true);
    EXPECT_NE(a.kernel, attn_path::cudnn);
    EXPECT_FALSE(a.note.empty());
    if (!why.empty()) {
        EXPECT_NE(a.note.find(why), std::string::npos) << a.note;
    }
    if (why.empty()) {
        EXPECT_EQ(choose_attention_kernel(c, attn_path::cudnn, true, true).kernel,
                  attn_path::cudnn);
        return true;
    }
    try {
        choose_attention_kernel(c, attn_path::cudnn, true, true);
        ADD_FAILURE() << "not refused";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    return false;
}

TEST(cudnn_support, every_row_gives_a_kernel_and_a_reason) {
    int rows = 0, cudnn_rows = 0;
    for (const auto mask : masks)
        for (const auto dtype : dtypes)
            for (const auto& cc : ccs)
                for (const int v : versions)
                    for (const bool causal : {true, false})
                        for (const std::int64_t k_len : {1024, 4096}) {
                            const attn_case_traits c{mask, dtype, cc[0], cc[1], v, causal, k_len};
                            SCOPED_TRACE(std::string(to_string(mask)) + " " + to_string(dtype) +
                                         " cc " + std::to_string(cc[0]) + "." +
                                         std::to_string(cc[1]) + " cuDNN " + std::to_string(v) +
                                         (causal ? " causal" : "") + " k_len " +
                                         std::to_string(k_len));
                            ++rows;
                            cudnn_rows += check_row(c) ? 1 : 0;
                        }
    EXPECT_EQ(rows, 6 * 4 * 5 * 10 * 2 * 2);
    EXPECT_GT(cudnn_rows, 0);
}

TEST(cudnn_support, known_bad_versions_are_named) {
    attn_case_traits c{attn_mask_kind::causal, attn_dtype_kind::bf16, 9, 0, 91001, true, 8192};
    EXPECT_NE(cudnn_unsupported_reason(c).find("9.10.1"), std::string::npos);
    c.cudnn_version = 91002;
    EXPECT_EQ(cudnn_unsupported_reason(c), "");
    c = {attn_mask_kind::window, attn_dtype_kind::fp16, 9, 0, 91400, false, 2048};
    EXPECT_NE(cudnn_unsupported_reason(c).find("9.14.0"), std::string::npos);
    c.causal = true; // the bug is the non-causal window's
    EXPECT_EQ(cudnn_unsupported_reason(c), "");
    c = {attn_mask_kind::causal, attn_dtype_kind::fp8, 8, 0, 91900, true, 8192};
    EXPECT_NE(cudnn_unsupported_reason(c).find("fp8"), std::string::npos);
    c.cc_major = 9;
    EXPECT_EQ(cudnn_unsupported_reason(c), "");
    EXPECT_EQ(cudnn_version_text(91900), "9.19.0");
    EXPECT_EQ(cudnn_version_text(91002), "9.10.2");
}

TEST(cudnn_support, our_kernels_stay_choices) {
    const attn_case_traits causal{
        attn_mask_kind::causal, attn_dtype_kind::bf16, 9, 0, 91900, true, 8192};
    EXPECT_EQ(choose_attention_kernel(causal, attn_path::automatic, true, true).kernel,
              attn_path::sm90);
    EXPECT_EQ(choose_attention_kernel(causal, attn_path::automatic, false, true).kernel,
              attn_path::sm80);
    EXPECT_EQ(choose_attention_kernel(causal, attn_path::sm80, true, true).kernel, attn_path::sm80);
    attn_case_traits window = causal;
    window.mask = attn_mask_kind::window;
    EXPECT_EQ(choose_attention_kernel(window, attn_path::sm90, true, true).kernel, attn_path::sm80);
    EXPECT_EQ(choose_attention_kernel(window, attn_path::automatic, true, true).kernel,
              attn_path::sm80);
    // cudnn on a build without it: not compiled, one line.
    EXPECT_THROW(choose_attention_kernel(causal, attn_path::cudnn, true, false),
                 not_compiled_error);
    EXPECT_NE(choose_attention_kernel(causal, attn_path::automatic, true, false)
                  .note.find("not compiled"),
              std::string::npos);
}
