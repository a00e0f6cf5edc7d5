#include "case_checks.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

/// The first value of `v` that is not a finite, non-negative time, described, or "".
std::string bad_time(const std::vector<double>& v, const char* name, std::size_t world) {
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isfinite(v[i]) && v[i] >= 0)
            continue;
        return fmt::format("{} [iteration {}, rank {}] is {}: times must be finite and >= 0", name,
                           i / world, i % world, v[i]);
    }
    return "";
}

} // namespace

std::string timing_problem(const case_data& c) {
    if (c.world == 0)
        return "timings have no rank columns";
    if (c.world_size != static_cast<int>(c.world))
        return fmt::format("world_size is {} but the timings have {} rank columns", c.world_size,
                           c.world);
    for (std::size_t r = 0; r < c.is_warmup.size(); ++r)
        if (c.is_warmup[r] > 1)
            return fmt::format("is_warmup[{}] is {}: warm-up flags must be 0 or 1", r,
                               static_cast<int>(c.is_warmup[r]));
    if (c.is_warmup.size() != c.rows)
        return "is_warmup length differs from time_s rows";
    std::size_t timed = 0;
    for (const auto w : c.is_warmup)
        timed += w == 0;
    if (timed == 0)
        return "no timed iteration (every row is warm-up)";
    for (const auto& [v, name] : {std::pair{&c.time_s, "time_s"},
                                  {&c.compute_s, "compute_s"},
                                  {&c.comm_wait_s, "comm_wait_s"}})
        if (std::string why = bad_time(*v, name, c.world); !why.empty())
            return why;
    return "";
}

std::vector<std::uint8_t> warmup_from_attribute(const case_data& c) {
    const auto w = c.number("warmup");
    if (!w || *w < 0 || *w != std::floor(*w) || *w > static_cast<double>(c.rows))
        return {};
    std::vector<std::uint8_t> flags(c.rows, 0);
    for (std::size_t r = 0; r < static_cast<std::size_t>(*w); ++r)
        flags[r] = 1;
    return flags;
}

} // namespace ringscale::analysis
