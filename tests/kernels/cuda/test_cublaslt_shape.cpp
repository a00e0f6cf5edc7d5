// The rules Hopper's cuBLASLt sets on the training step's reduced-precision GEMMs
// (kernels/cuda/cublaslt_shape.hpp), checked on the host: each refused shape with its one-line
// reason, each accepted one with none, and the descriptor cache's key telling shapes apart.
#include "kernels/cuda/cublaslt_shape.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace ringscale::kernels::cuda;

namespace {
lt_shape shape(lt_type a, lt_type b, bool a_trans, bool b_trans, std::int64_t k = 64) {
    lt_shape s;
    s.m = 48;
    s.n = 32;
    s.k = k;
    s.a = a;
    s.b = b;
    s.a_trans = a_trans;
    s.b_trans = b_trans;
    return s;
}
} // namespace

TEST(cublaslt_shape, bf16_and_fp16_take_every_form) {
    for (lt_type t : {lt_type::bf16, lt_type::f16})
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                EXPECT_EQ(lt_refusal(shape(t, t, ta, tb)), "") << lt_type_name(t);
    EXPECT_NE(lt_refusal(shape(lt_type::bf16, lt_type::f16, false, true)).find("one type"),
              std::string::npos);
}

TEST(cublaslt_shape, fp8_takes_the_tn_form_and_no_two_e5m2) {
    EXPECT_EQ(lt_refusal(shape(lt_type::e4m3, lt_type::e4m3, false, true)), "");
    EXPECT_EQ(lt_refusal(shape(lt_type::e5m2, lt_type::e4m3, false, true)), ""); // dy x W
    EXPECT_EQ(lt_refusal(shape(lt_type::e4m3, lt_type::e5m2, false, true)), "");
    const auto reason = [](const lt_shape& s) { return lt_refusal(s); };
    EXPECT_NE(reason(shape(lt_type::e5m2, lt_type::e5m2, false, true)).find("two E5M2"),
              std::string::npos);
    for (auto [ta, tb] : {std::pair{false, false}, {true, true}, {true, false}})
        EXPECT_NE(reason(shape(lt_type::e4m3, lt_type::e4m3, ta, tb)).find("TN form"),
                  std::string::npos);
    EXPECT_NE(reason(shape(lt_type::e4m3, lt_type::bf16, false, true)).find("fp8 partner"),
              std::string::npos);
    EXPECT_NE(reason(shape(lt_type::e4m3, lt_type::e4m3, false, true, 72)).find("multiples of 16"),
              std::string::npos);
    lt_shape empty = shape(lt_type::bf16, lt_type::bf16, false, false);
    empty.k = 0;
    EXPECT_NE(reason(empty), "");
    for (const lt_shape& s : {shape(lt_type::e5m2, lt_type::e5m2, false, true), empty})
        EXPECT_EQ(reason(s).find('\n'), std::string::npos);
}

TEST(cublaslt_shape, the_cache_key_tells_every_attribute_apart) {
    std::set<lt_shape> keys;
    const lt_shape base = shape(lt_type::bf16, lt_type::bf16, false, true);
    keys.insert(base);
    keys.insert(base); // the same shape: one descriptor
    lt_shape s = base;
    s.m = 49;
    keys.insert(s);
    s = base;
    s.a_trans = true;
    keys.insert(s);
    s = base;
    s.a = s.b = lt_type::f16;
    keys.insert(s);
    s = base;
    s.k = 128;
    keys.insert(s);
    EXPECT_EQ(keys.size(), 5u);
}
