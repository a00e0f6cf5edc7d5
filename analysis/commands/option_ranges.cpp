#include "option_ranges.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

std::string describe(const number_range& r) {
    if (r.whole)
        return fmt::format("a whole number from {:g} to {:g}", r.lo, r.hi);
    return fmt::format("a number in {}{:g}, {:g}{}", r.lo_open ? '(' : '[', r.lo, r.hi,
                       r.hi_open ? ')' : ']');
}

double in_range(const std::string& option, double value, const number_range& r) {
    const bool above_lo = r.lo_open ? value > r.lo : value >= r.lo;
    const bool below_hi = r.hi_open ? value < r.hi : value <= r.hi;
    const bool whole = !r.whole || value == std::floor(value);
    // NaN fails every comparison, so it is refused here too.
    if (!(above_lo && below_hi && whole))
        throw config_error(fmt::format("--{}: {:g} is not {}", option, value, describe(r)));
    return value;
}

} // namespace ringscale::analysis
