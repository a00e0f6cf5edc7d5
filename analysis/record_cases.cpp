#include "record_cases.hpp"

namespace ringscale::analysis {

namespace {

attr_value from_record(const results::attr_value& v) {
    attr_value out;
    out.text = results::attr_text(v);
    out.number = results::attr_number(v);
    out.is_integer = std::holds_alternative<std::int64_t>(v);
    return out;
}

} // namespace

case_data case_from_record(const results::case_record& rec,
                           const std::shared_ptr<const file_info>& file, const std::string& group) {
    case_data c;
    c.file = file;
    c.group = group;
    for (const auto& [name, value] : rec.flat())
        c.attrs[name] = from_record(value);
    for (const auto& [name, value] : rec.identity)
        c.identity[name] = from_record(value);
    c.job = c.text(schema::attr::job);
    c.variant = c.text(schema::attr::variant);
    c.status = c.text(schema::attr::status, schema::status::ok);
    c.error = c.text(schema::attr::error);
    c.world_size = static_cast<int>(c.number(schema::attr::world_size).value_or(rec.world));
    c.rows = static_cast<std::size_t>(rec.rows);
    c.world = static_cast<std::size_t>(rec.world);
    c.is_warmup = rec.is_warmup;
    c.time_s = rec.time_s;
    c.compute_s = rec.compute_s;
    c.comm_wait_s = rec.comm_wait_s;
    c.step_s = rec.slowest_timed(rec.time_s);
    const auto per_rank = [](const std::vector<std::uint64_t>& v) {
        return std::vector<double>(v.begin(), v.end());
    };
    c.memory_bytes[schema::ds_peak_host_bytes] = per_rank(rec.peak_host_bytes);
    c.memory_bytes[schema::ds_peak_device_bytes] = per_rank(rec.peak_device_bytes);
    c.memory_bytes[schema::ds_peak_rss_bytes] = per_rank(rec.peak_rss_bytes);
    for (const auto& [name, values] : rec.per_rank)
        c.memory_bytes[name] = values;
    if (auto it = rec.per_iteration.find(schema::ds_loss); it != rec.per_iteration.end())
        c.loss = it->second;
    c.threads.assign(rec.threads.begin(), rec.threads.end());
    c.affinity_cores.assign(rec.affinity_cores.begin(), rec.affinity_cores.end());
    return c;
}

} // namespace ringscale::analysis
