#include "record_cases.hpp"

#include "src/base/stored_machine.hpp"

namespace ringscale::analysis {

namespace {

/// The world size of a case without timings: its attribute, when a plausible rank count.
int world_size_attribute(const case_data& c) {
    const auto p = c.number(schema::attr::world_size);
    return p && *p >= 1 && *p <= 1e9 && *p == static_cast<int>(*p) ? static_cast<int>(*p) : 0;
}

} // namespace

case_data case_from_record(const results::case_record& rec,
                           const std::shared_ptr<const file_info>& file, const std::string& group) {
    case_data c;
    static_cast<stored::case_arrays&>(c) = stored::arrays_of(rec);
    c.file = file;
    c.group = group;
    c.attrs = stored::view_of(rec.flat());
    c.identity = stored::view_of(rec.identity);
    const auto identity_text = [&](const char* name) {
        const auto it = c.identity.find(name);
        return it == c.identity.end() ? c.text(name) : it->second.text;
    };
    c.job = identity_text(schema::attr::job);
    c.variant = identity_text(schema::attr::variant);
    c.status = stored::status_of(rec);
    c.error = c.text(schema::attr::error);
    // The checks made world_size (where given) equal to the data's rank columns.
    c.world_size = c.world > 0 ? static_cast<int>(c.world) : world_size_attribute(c);
    c.step_s = rec.slowest_timed(rec.time_s);
    c.contention = stored::contention_of(rec);
    c.read_notes = rec.read_notes;
    c.machine = rec.machine;
    c.numerics = rec.numerics;
    c.trace = rec.trace;
    return c;
}

} // namespace ringscale::analysis
