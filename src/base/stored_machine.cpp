#include "stored_machine.hpp"

#include "error.hpp"
#include "numerics_schema.hpp"
#include "results_schema.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace ringscale::stored {

namespace {

/// The known machine datasets of group `m`, each [world] (refused otherwise).
machine::machine_fields read_fields(const h5::group& m, std::size_t world,
                                    std::uint64_t max_bytes) {
    machine::machine_fields out;
    for (const std::string& name : schema::machine_datasets()) {
        if (!m.exists(name))
            continue;
        out[name] = m.read<double>(name, nullptr, max_bytes, [&](const h5::dataset_info& info) {
            if (info.dims != std::vector<hsize_t>{world})
                throw error(
                    error_kind::hdf5,
                    fmt::format("machine/{} is not one value per rank ({} ranks)", name, world));
        });
    }
    return out;
}

double number_attr(const h5::object& o, const char* name) {
    if (!o.has_attr(name))
        return std::numeric_limits<double>::quiet_NaN();
    if (o.attr_kind(name) == h5::attr_type::integer)
        return static_cast<double>(o.attr_int(name));
    if (o.attr_kind(name) == h5::attr_type::floating)
        return o.attr_double(name);
    throw error(error_kind::hdf5, fmt::format("attribute '{}' is not a number", name));
}

machine::probe read_probe(const h5::group& g, std::uint64_t max_bytes) {
    machine::probe p;
    const double before = number_attr(g, schema::sentinel_attr::before_case);
    if (!(before >= 0 && before <= (1 << 24) && before == std::floor(before)))
        throw error(error_kind::hdf5, fmt::format("before_case is {}: a case index", before));
    p.before_case = static_cast<int>(before);
    p.compute_s = number_attr(g, schema::sentinel_attr::compute_s);
    p.allreduce_s = number_attr(g, schema::sentinel_attr::allreduce_s);
    if (g.exists(schema::machine_group)) {
        const h5::group m = g.open_group(schema::machine_group);
        std::size_t world = 0;
        for (const std::string& name : schema::machine_datasets())
            if (m.exists(name) && m.inspect(name).dims.size() == 1)
                world = m.inspect(name).dims[0];
        p.machine = read_fields(m, world, max_bytes);
        if (std::string why = machine::machine_fields_problem(p.machine, static_cast<int>(world));
            !why.empty())
            throw error(error_kind::hdf5, why);
    }
    return p;
}

} // namespace

void read_machine_state(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes) {
    auto& outcome = rec.outcome;
    if (const auto it = outcome.find(schema::attr::contended); it != outcome.end()) {
        const auto v = results::attr_number(it->second);
        if (!v || (*v != 0 && *v != 1)) {
            rec.read_notes.push_back(fmt::format("outcome 'contended' is {}, not 0 or 1: mark "
                                                 "dropped",
                                                 results::attr_text(it->second)));
            outcome.erase(it);
            outcome.erase(schema::attr::contention);
        }
    }
    try {
        if (!g.exists(schema::machine_group))
            return;
        const auto world = static_cast<std::size_t>(std::max(rec.world, 0));
        machine::machine_fields m =
            read_fields(g.open_group(schema::machine_group), world, max_bytes);
        if (std::string why = machine::machine_fields_problem(m, rec.world); !why.empty()) {
            rec.read_notes.push_back("machine state dropped: " + why);
            return;
        }
        rec.machine = std::move(m);
    } catch (const std::exception& e) {
        rec.read_notes.push_back("machine state dropped: " + short_reason(e.what()));
    }
}

void read_numerics(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes) {
    try {
        if (!g.exists(schema::numerics_group))
            return;
        const h5::group m = g.open_group(schema::numerics_group);
        std::map<std::string, std::vector<double>> out;
        std::uint64_t steps = 0;
        bool first = true;
        for (const std::string& name : schema::numerics_datasets()) {
            if (!m.exists(name))
                continue;
            out[name] = m.read<double>(name, nullptr, max_bytes, [&](const h5::dataset_info& i) {
                if (i.dims.size() != 1 || i.dims[0] > schema::numerics_max_steps ||
                    (!first && i.dims[0] != steps))
                    throw error(error_kind::hdf5,
                                fmt::format("numerics/{} is not one value per step", name));
                steps = i.dims[0];
                first = false;
            });
        }
        rec.numerics = std::move(out);
    } catch (const std::exception& e) {
        rec.read_notes.push_back("numerics dropped: " + short_reason(e.what()));
    }
}

std::string contention_of(const results::case_record& rec) {
    const std::string derived = machine::contention_reason(rec.machine);
    const auto mark = rec.number(schema::attr::contended);
    if (mark && *mark == 1) {
        const std::string why = rec.text(schema::attr::contention);
        return why.empty() ? (derived.empty() ? "marked contended by the launcher" : derived) : why;
    }
    return derived;
}

sentinel_record read_sentinel(const h5::group& root, int cases, std::uint64_t max_bytes) {
    sentinel_record out;
    try {
        if (!root.exists(schema::sentinel_group))
            return out;
        const h5::group s = root.open_group(schema::sentinel_group);
        for (const std::string& name : s.children())
            out.probes.push_back(read_probe(s.open_group(name), max_bytes));
        if (std::string why = machine::probes_problem(out.probes, cases); !why.empty())
            throw error(error_kind::hdf5, why);
    } catch (const std::exception& e) {
        out.probes.clear();
        out.problem = "sentinel dropped: " + short_reason(e.what());
    }
    return out;
}

} // namespace ringscale::stored
