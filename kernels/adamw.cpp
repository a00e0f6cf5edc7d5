#include "kernels/adamw.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <string>

namespace ringscale::kernels {

void adamw_check(const adamw_params& hp, std::int64_t step) {
    auto finite_nonneg = [](float x) { return std::isfinite(x) && x >= 0.0f; };
    RINGSCALE_REQUIRE(finite_nonneg(hp.lr), "adamw: lr must be finite and >= 0");
    RINGSCALE_REQUIRE(finite_nonneg(hp.beta1) && hp.beta1 < 1.0f,
                      "adamw: beta1 must lie in [0, 1)");
    RINGSCALE_REQUIRE(finite_nonneg(hp.beta2) && hp.beta2 < 1.0f,
                      "adamw: beta2 must lie in [0, 1)");
    RINGSCALE_REQUIRE(finite_nonneg(hp.eps), "adamw: eps must be finite and >= 0");
    RINGSCALE_REQUIRE(finite_nonneg(hp.weight_decay),
                      "adamw: weight_decay must be finite and >= 0");
    RINGSCALE_REQUIRE(step >= 1, "adamw: step must be >= 1 (got " + std::to_string(step) + ")");
}

} // namespace ringscale::kernels
