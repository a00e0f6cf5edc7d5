#include "case_checks.hpp"

#include "src/base/results_schema.hpp"

namespace ringscale::analysis {

std::string timing_problem(const case_data& c) {
    stored::attr_map attrs = c.attrs;
    if (c.world_size != 0)
        attrs[schema::attr::world_size] =
            attr_value{std::to_string(c.world_size), c.world_size, true};
    return stored::data_problem(c, attrs, true);
}

std::vector<std::uint8_t> warmup_from_attribute(const case_data& c) {
    return stored::warmup_from_attribute(c.rows, c.attrs);
}

} // namespace ringscale::analysis
