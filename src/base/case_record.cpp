#include "src/base/case_record.hpp"
#include "src/base/numerics_schema.hpp"
#include "src/base/stored_trace.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::results {

using schema::attr_group;

std::string attr_text(const attr_value& v) {
    return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

std::optional<double> attr_number(const attr_value& v) {
    if (const auto* i = std::get_if<std::int64_t>(&v))
        return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v))
        return *d;
    return std::nullopt;
}

const attr_map& case_record::group(attr_group g) const {
    switch (g) {
    case attr_group::identity:
        return identity;
    case attr_group::run:
        return run;
    case attr_group::derived:
        return derived;
    case attr_group::outcome:
        break;
    }
    return outcome;
}

attr_map& case_record::group(attr_group g) {
    return const_cast<attr_map&>(static_cast<const case_record&>(*this).group(g));
}

attr_map case_record::flat() const {
    attr_map out = identity;
    for (const auto* g : {&run, &derived, &outcome})
        for (const auto& [k, v] : *g)
            out[k] = v;
    return out;
}

const attr_value* case_record::find(const std::string& name) const {
    for (const auto* g : {&outcome, &derived, &run, &identity})
        if (auto it = g->find(name); it != g->end())
            return &it->second;
    return nullptr;
}

std::string case_record::text(const std::string& name) const {
    const attr_value* v = find(name);
    return v ? attr_text(*v) : std::string();
}

std::optional<double> case_record::number(const std::string& name) const {
    const attr_value* v = find(name);
    return v ? attr_number(*v) : std::nullopt;
}

std::vector<double> case_record::slowest_timed(const std::vector<double>& per_rank) const {
    std::vector<double> out;
    const auto w = static_cast<std::size_t>(world);
    for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) {
        if ((i < is_warmup.size() && is_warmup[i]) || w == 0 || per_rank.size() < (i + 1) * w)
            continue;
        const double* row = per_rank.data() + i * w;
        out.push_back(*std::max_element(row, row + w));
    }
    return out;
}

double case_record::median_slowest(const std::vector<double>& per_rank) const {
    std::vector<double> v = slowest_timed(per_rank);
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void write_attrs(const h5::object& obj, const attr_map& attrs) {
    for (const auto& [name, value] : attrs)
        std::visit([&](const auto& v) { obj.set_attr(name, v); }, value);
}

void write_case_record(const h5::group& g, const case_record& rec) {
    for (const attr_group group : schema::all_groups)
        write_attrs(g.create_group(schema::group_name(group)), rec.group(group));
    const hsize_t rows = static_cast<hsize_t>(rec.rows), world = static_cast<hsize_t>(rec.world);
    g.write<double>(schema::ds_time_s, rec.time_s, {rows, world});
    g.write<double>(schema::ds_compute_s, rec.compute_s, {rows, world});
    g.write<double>(schema::ds_comm_wait_s, rec.comm_wait_s, {rows, world});
    g.write<std::uint8_t>(schema::ds_is_warmup, rec.is_warmup, {rows});
    g.write<std::uint64_t>(schema::ds_peak_host_bytes, rec.peak_host_bytes, {world});
    g.write<std::uint64_t>(schema::ds_peak_device_bytes, rec.peak_device_bytes, {world});
    g.write<std::uint64_t>(schema::ds_peak_rss_bytes, rec.peak_rss_bytes, {world});
    if (rec.threads.size() == world) {
        g.write<std::int32_t>(schema::ds_threads, rec.threads, {world});
        g.write<std::int32_t>(schema::ds_affinity_cores, rec.affinity_cores, {world});
        g.write_strings(schema::ds_affinity_list, rec.affinity_list);
    }
    for (const auto& [name, values] : rec.per_iteration)
        g.write<double>(name, values, {static_cast<hsize_t>(values.size())});
    for (const auto& [name, values] : rec.per_rank)
        g.write<double>(name, values, {world});
    if (!rec.case_key.empty())
        g.write_string(schema::ds_case_key, rec.case_key);
    if (!rec.numerics.empty()) {
        const h5::group m = g.create_group(schema::numerics_group);
        for (const auto& [name, values] : rec.numerics)
            m.write<double>(name, values, {static_cast<hsize_t>(values.size())});
    }
    if (!rec.trace.empty())
        stored::write_trace(g, rec);
    if (!rec.machine.empty()) {
        const h5::group m = g.create_group(schema::machine_group);
        for (const auto& [name, values] : rec.machine)
            m.write<double>(name, values, {static_cast<hsize_t>(values.size())});
    }
}

} // namespace ringscale::results
