#include "kernels/linear.hpp"

#include "src/base/error.hpp"

#include <climits>
#include <string>

namespace ringscale::kernels {

void linear_check(const linear_shape& s) {
    RINGSCALE_REQUIRE(
        s.tokens > 0 && s.in > 0 && s.out > 0,
        "linear: tokens, in and out must be > 0 (got tokens=" + std::to_string(s.tokens) +
            ", in=" + std::to_string(s.in) + ", out=" + std::to_string(s.out) + ")");
    const std::size_t limit = INT_MAX;
    RINGSCALE_REQUIRE(s.tokens <= limit && s.in <= limit && s.out <= limit,
                      "linear: a dimension exceeds the BLAS int range");
}

double linear_fwd_flops(const linear_shape& s) {
    return 2.0 * static_cast<double>(s.tokens) * static_cast<double>(s.in) *
           static_cast<double>(s.out);
}

} // namespace ringscale::kernels
