#include "stored_case.hpp"

#include "error.hpp"
#include "results_schema.hpp"
#include "stored_machine.hpp"
#include "stored_trace.hpp"
#include "text_escape.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ringscale::stored {

namespace {

[[noreturn]] void refuse(const std::string& why) {
    throw error(error_kind::hdf5, why);
}

/// Dataset `name` read as numbers, refused before its data unless its shape is `want`.
std::vector<double> read_shaped(const h5::group& g, const std::string& name,
                                const std::vector<hsize_t>& want, const char* meaning,
                                std::uint64_t max_bytes) {
    return g.read<double>(name, nullptr, max_bytes, [&](const h5::dataset_info& info) {
        if (info.dims != want)
            refuse(fmt::format("dataset '{}' has shape [{}], expected [{}] ({})", name,
                               fmt::join(info.dims, ", "), fmt::join(want, ", "), meaning));
    });
}

/// Warm-up flags read as numbers, so that 0.5 or -1 is seen as such (reading them as uint8
/// would convert both to 0: a warm-up row counted as timed).
std::vector<std::uint8_t> read_warmup_flags(const h5::group& g, const case_arrays& d,
                                            const attr_map& attrs, std::uint64_t max_bytes) {
    if (!g.exists(schema::ds_is_warmup)) {
        auto flags = warmup_from_attribute(d.rows, attrs);
        if (flags.empty() && d.rows > 0)
            refuse("no 'is_warmup' dataset and no usable 'warmup' attribute: warm-up rows cannot "
                   "be told from timed ones");
        return flags;
    }
    const auto v =
        read_shaped(g, schema::ds_is_warmup, {d.rows}, "one flag per row of time_s", max_bytes);
    std::vector<std::uint8_t> flags(v.size());
    for (std::size_t r = 0; r < v.size(); ++r) {
        if (v[r] != 0 && v[r] != 1)
            refuse(fmt::format("is_warmup[{}] is {}: warm-up flags must be 0 or 1", r, v[r]));
        flags[r] = v[r] == 1 ? 1 : 0;
    }
    return flags;
}

/// A per-rank dataset ([world]) read as numbers, or empty when the case has none.
std::vector<double> read_per_rank(const h5::group& g, const std::string& name, std::size_t world,
                                  std::uint64_t max_bytes) {
    if (!g.exists(name))
        return {};
    return read_shaped(g, name, {world}, "one value per rank", max_bytes);
}

std::vector<int> whole_numbers(const std::vector<double>& v, const std::string& name) {
    std::vector<int> out;
    for (std::size_t k = 0; k < v.size(); ++k) {
        if (!(v[k] >= 0 && v[k] <= 1e9 && v[k] == std::floor(v[k])))
            refuse(
                fmt::format("{} [rank {}] is {}: it must be a whole number >= 0", name, k, v[k]));
        out.push_back(static_cast<int>(v[k]));
    }
    return out;
}

void read_memory(const h5::group& g, case_arrays& d, std::uint64_t max_bytes) {
    std::vector<std::string> names = schema::training_memory_datasets();
    names.insert(names.end(), {schema::ds_peak_host_bytes, schema::ds_peak_device_bytes,
                               schema::ds_peak_rss_bytes});
    for (const std::string& name : names)
        if (g.exists(name))
            d.memory_bytes[name] = read_per_rank(g, name, d.world, max_bytes);
    d.threads =
        whole_numbers(read_per_rank(g, schema::ds_threads, d.world, max_bytes), schema::ds_threads);
    d.affinity_cores = whole_numbers(
        read_per_rank(g, schema::ds_affinity_cores, d.world, max_bytes), schema::ds_affinity_cores);
}

/// compute_s or comm_wait_s: absent, or of time_s's shape.
std::vector<double> read_like_time(const h5::group& g, const char* name, const case_arrays& d,
                                   std::uint64_t max_bytes) {
    if (!g.exists(name))
        return {};
    return read_shaped(g, name, {d.rows, d.world}, "as time_s: [iterations, ranks]", max_bytes);
}

} // namespace

namespace {

/// The datasets of case group `g`, each shape checked before its data, then data_problem().
case_arrays read_case_arrays(const h5::group& g, const attr_map& attrs, bool ok,
                             std::uint64_t max_bytes) {
    case_arrays d;
    d.time_s = g.read<double>(schema::ds_time_s, nullptr, max_bytes, [&](const auto& t) {
        if (t.dims.size() != 2 || t.dims[0] > INT_MAX || t.dims[1] > INT_MAX)
            refuse(fmt::format("dataset 'time_s' has shape [{}], not [iterations, ranks]",
                               fmt::join(t.dims, ", ")));
        d.rows = t.dims[0];
        d.world = t.dims[1];
    });
    d.compute_s = read_like_time(g, schema::ds_compute_s, d, max_bytes);
    d.comm_wait_s = read_like_time(g, schema::ds_comm_wait_s, d, max_bytes);
    d.is_warmup = read_warmup_flags(g, d, attrs, max_bytes);
    if (g.exists(schema::ds_loss)) {
        d.loss = g.read<double>(schema::ds_loss, nullptr, max_bytes, [](const auto& l) {
            if (l.dims.size() != 1)
                refuse("dataset 'loss' is not one value per iteration");
        });
    }
    read_memory(g, d, max_bytes);
    if (const std::string why = data_problem(d, attrs, ok); !why.empty())
        refuse(why);
    return d;
}

/// A byte count checked finite and >= 0 (data_problem) as the record holds it.
std::vector<std::uint64_t> to_bytes(const std::vector<double>& v) {
    std::vector<std::uint64_t> out;
    out.reserve(v.size());
    for (const double x : v)
        out.push_back(x >= 18446744073709551615.0 ? UINT64_MAX : static_cast<std::uint64_t>(x));
    return out;
}

/// Put the checked datasets `d` into `rec`.
void fill_datasets(case_arrays d, results::case_record& rec) {
    rec.rows = static_cast<int>(d.rows);
    rec.world = static_cast<int>(d.world);
    rec.time_s = std::move(d.time_s);
    rec.compute_s = std::move(d.compute_s);
    rec.comm_wait_s = std::move(d.comm_wait_s);
    rec.is_warmup = std::move(d.is_warmup);
    if (!d.loss.empty())
        rec.per_iteration[schema::ds_loss] = std::move(d.loss);
    for (auto& [name, v] : d.memory_bytes) {
        if (name == schema::ds_peak_host_bytes)
            rec.peak_host_bytes = to_bytes(v);
        else if (name == schema::ds_peak_device_bytes)
            rec.peak_device_bytes = to_bytes(v);
        else if (name == schema::ds_peak_rss_bytes)
            rec.peak_rss_bytes = to_bytes(v);
        else
            rec.per_rank[name] = std::move(v);
    }
    rec.threads.assign(d.threads.begin(), d.threads.end());
    rec.affinity_cores.assign(d.affinity_cores.begin(), d.affinity_cores.end());
}

/// Every attribute of `obj` as the record holds it, text through terminal_text.
void read_record_attrs(const h5::object& obj, results::attr_map& out) {
    for (const std::string& name : obj.attr_names()) {
        results::attr_value v;
        switch (obj.attr_kind(name)) {
        case h5::attr_type::string:
            v = terminal_text(obj.attr_string(name));
            break;
        case h5::attr_type::integer:
            v = obj.attr_int(name);
            break;
        case h5::attr_type::floating:
            v = obj.attr_double(name);
            break;
        default:
            v = std::string("?");
        }
        out.emplace(terminal_text(name), std::move(v)); // names alike once escaped: the first
    }
}

/// The record's datasets after its attributes: time_s required of an ok case.
void read_record_data(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes) {
    const std::string status = status_of(rec);
    if (!g.exists(schema::ds_time_s)) {
        if (status == schema::status::ok)
            refuse("dataset 'time_s' is missing");
        return; // a failed or skipped case may carry no timings
    }
    fill_datasets(read_case_arrays(g, view_of(rec.flat()), status == schema::status::ok, max_bytes),
                  rec);
}

} // namespace

attr_map read_attrs(const h5::object& obj) {
    results::attr_map m;
    read_record_attrs(obj, m);
    return view_of(m);
}

attr_value view_of(const results::attr_value& v) {
    attr_value out;
    out.text = results::attr_text(v);
    out.number = results::attr_number(v);
    out.is_integer = std::holds_alternative<std::int64_t>(v);
    return out;
}

attr_map view_of(const results::attr_map& m) {
    attr_map out;
    for (const auto& [name, value] : m)
        out.emplace(name, view_of(value));
    return out;
}

case_arrays arrays_of(const results::case_record& rec) {
    case_arrays d;
    d.rows = static_cast<std::size_t>(std::max(rec.rows, 0));
    d.world = static_cast<std::size_t>(std::max(rec.world, 0));
    d.is_warmup = rec.is_warmup;
    d.time_s = rec.time_s;
    d.compute_s = rec.compute_s;
    d.comm_wait_s = rec.comm_wait_s;
    for (const auto& [name, v] : {std::pair{schema::ds_peak_host_bytes, &rec.peak_host_bytes},
                                  {schema::ds_peak_device_bytes, &rec.peak_device_bytes},
                                  {schema::ds_peak_rss_bytes, &rec.peak_rss_bytes}})
        if (!v->empty())
            d.memory_bytes[name].assign(v->begin(), v->end());
    for (const auto& [name, v] : rec.per_rank)
        d.memory_bytes[name] = v;
    if (const auto it = rec.per_iteration.find(schema::ds_loss); it != rec.per_iteration.end())
        d.loss = it->second;
    d.threads.assign(rec.threads.begin(), rec.threads.end());
    d.affinity_cores.assign(rec.affinity_cores.begin(), rec.affinity_cores.end());
    return d;
}

std::string status_of(const results::case_record& rec) {
    return rec.find(schema::attr::status) ? rec.status() : schema::status::ok;
}

results::case_record read_case_record(const h5::group& g, std::uint64_t max_bytes) {
    results::case_record rec;
    for (const schema::attr_group group : schema::all_groups) {
        const char* name = schema::group_name(group);
        if (!g.exists(name))
            refuse(fmt::format("attribute group '{}' is missing", name));
        read_record_attrs(g.open_group(name), rec.group(group));
    }
    const auto job = rec.identity.find(schema::attr::job);
    if (job == rec.identity.end() || results::attr_text(job->second).empty())
        refuse("attribute 'job' is missing");
    read_record_data(g, rec, max_bytes); // world_size against the data first
    if (const std::string why = identity_problem(view_of(rec.identity)); !why.empty())
        refuse(why);
    if (g.exists(schema::ds_case_key))
        rec.case_key = g.read_string(schema::ds_case_key);
    read_machine_state(g, rec, max_bytes); // optional: dropped with a note, never the case
    read_numerics(g, rec, max_bytes);      // optional, the same way
    read_trace(g, rec, max_bytes);         // optional (--trace), the same way
    return rec;
}

results::case_record read_v1_case_record(const h5::group& g, std::uint64_t max_bytes) {
    results::case_record rec;
    results::attr_map flat;
    read_record_attrs(g, flat);
    for (auto& [name, value] : flat)
        rec.group(schema::v1_attr_group(name))[name] = std::move(value);
    if (rec.text(schema::attr::job).empty())
        refuse("attribute 'job' is missing");
    read_record_data(g, rec, max_bytes); // world_size against the data first
    if (const std::string why = identity_problem(view_of(rec.identity)); !why.empty())
        refuse(why);
    return rec;
}

} // namespace ringscale::stored
