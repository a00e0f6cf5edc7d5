// The single-rank reference trainer (kernels/model/reference_train.hpp): it lowers the loss and
// repeats itself bit for bit, and on an explicit CPU context it is the default run.
#include "tests/kernels/model/model_rig.hpp"

#include "kernels/executor.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::model;
using namespace ringscale::test_model;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST(model_train, reference_training_lowers_the_loss_and_is_deterministic) {
    const model_config c = tiny();
    const param_layout l(c);
    std::vector<float> a(l.total()), b(l.total());
    init_params(c, l, 1, a.data());
    b = a;
    adamw_params hp;
    hp.lr = 3e-3f;
    const auto la = reference_train(c, 2, 2, 64, 5, hp, a.data());
    const auto lb = reference_train(c, 2, 2, 64, 5, hp, b.data());
    ASSERT_EQ(la.size(), 5u);
    EXPECT_LT(la.back(), la.front());
    EXPECT_EQ(la, lb);
    EXPECT_EQ(a, b);
}

TEST(transformer, the_reference_run_on_an_explicit_cpu_context_is_the_default_run) {
    model_config c;
    c.layers = 2;
    c.hidden = 128;
    c.heads = 2;
    c.vocab = 64;
    const param_layout layout(c);
    std::vector<float> a(layout.total()), b(layout.total()), ga(a.size()), gb(a.size());
    init_params(c, layout, 4, a.data());
    b = a;
    adamw_params hp;
    const auto la = reference_train(c, 3, 2, 64, 2, hp, a.data(), ga.data());
    const auto exec = make_executor(device_kind::cpu);
    train_context ctx(*exec, false);
    const auto lb = reference_train(c, 3, 2, 64, 2, hp, b.data(), gb.data(), ctx);
    EXPECT_EQ(la, lb);
    EXPECT_TRUE(same_bits(a, b));
    EXPECT_TRUE(same_bits(ga, gb));
}
