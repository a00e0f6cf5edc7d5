#include "stored_case.hpp"

#include "error.hpp"
#include "results_schema.hpp"
#include "text_escape.hpp"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ringscale::stored {

namespace {

[[noreturn]] void refuse(const std::string& why) {
    throw error(error_kind::hdf5, why);
}

/// The header of dataset `name`, refused unless its shape is `want`.
h5::dataset_info expect_shape(const h5::group& g, const char* name,
                              const std::vector<hsize_t>& want, const char* meaning) {
    h5::dataset_info info = g.inspect(name);
    if (info.dims != want)
        refuse(fmt::format("dataset '{}' has shape [{}], expected [{}] ({})", name,
                           fmt::join(info.dims, ", "), fmt::join(want, ", "), meaning));
    return info;
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
    expect_shape(g, schema::ds_is_warmup, {d.rows}, "one flag per row of time_s");
    const auto v = g.read<double>(schema::ds_is_warmup, nullptr, max_bytes);
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
    expect_shape(g, name.c_str(), {world}, "one value per rank");
    return g.read<double>(name, nullptr, max_bytes);
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
    expect_shape(g, name, {d.rows, d.world}, "as time_s: [iterations, ranks]");
    return g.read<double>(name, nullptr, max_bytes);
}

} // namespace

attr_map read_attrs(const h5::object& obj) {
    attr_map out;
    for (const std::string& name : obj.attr_names()) {
        attr_value v;
        switch (obj.attr_kind(name)) {
        case h5::attr_type::string:
            v.text = terminal_text(obj.attr_string(name));
            break;
        case h5::attr_type::integer: {
            const std::int64_t i = obj.attr_int(name);
            v.text = std::to_string(i);
            v.number = static_cast<double>(i);
            v.is_integer = true;
            break;
        }
        case h5::attr_type::floating:
            v.number = obj.attr_double(name);
            v.text = fmt::format("{}", *v.number);
            break;
        default:
            v.text = "?";
        }
        out.emplace(terminal_text(name), std::move(v));
    }
    return out;
}

case_arrays read_case_arrays(const h5::group& g, const attr_map& attrs, bool ok,
                             std::uint64_t max_bytes) {
    case_arrays d;
    const h5::dataset_info t = g.inspect(schema::ds_time_s);
    if (t.dims.size() != 2)
        refuse(fmt::format("dataset 'time_s' has shape [{}], not [iterations, ranks]",
                           fmt::join(t.dims, ", ")));
    d.rows = t.dims[0];
    d.world = t.dims[1];
    d.time_s = g.read<double>(schema::ds_time_s, nullptr, max_bytes);
    d.compute_s = read_like_time(g, schema::ds_compute_s, d, max_bytes);
    d.comm_wait_s = read_like_time(g, schema::ds_comm_wait_s, d, max_bytes);
    d.is_warmup = read_warmup_flags(g, d, attrs, max_bytes);
    if (g.exists(schema::ds_loss)) {
        if (g.inspect(schema::ds_loss).dims.size() != 1)
            refuse("dataset 'loss' is not one value per iteration");
        d.loss = g.read<double>(schema::ds_loss, nullptr, max_bytes);
    }
    read_memory(g, d, max_bytes);
    if (const std::string why = data_problem(d, attrs, ok); !why.empty())
        refuse(why);
    return d;
}

stored_case read_case_v2(const h5::group& g, std::uint64_t max_bytes) {
    stored_case c;
    for (const schema::attr_group group : schema::all_groups) {
        const char* name = schema::group_name(group);
        if (!g.exists(name))
            refuse(fmt::format("attribute group '{}' is missing", name));
        for (auto& [k, v] : read_attrs(g.open_group(name))) {
            if (group == schema::attr_group::identity)
                c.identity[k] = v;
            c.flat[k] = std::move(v); // later groups win: outcome over derived over identity
        }
    }
    const auto status = c.flat.find(schema::attr::status);
    c.status = status == c.flat.end() ? schema::status::ok : status->second.text;
    if (!c.identity.count("job") || c.identity.at("job").text.empty())
        refuse("attribute 'job' is missing");
    c.has_data = g.exists(schema::ds_time_s);
    if (!c.has_data && c.status == schema::status::ok)
        refuse("dataset 'time_s' is missing");
    if (c.has_data)
        c.data = read_case_arrays(g, c.flat, c.status == schema::status::ok, max_bytes);
    return c;
}

} // namespace ringscale::stored
