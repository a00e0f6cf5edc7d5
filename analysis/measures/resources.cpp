#include "resources.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

constexpr double mib = 1024.0 * 1024.0;

} // namespace

const std::vector<memory_figure>& memory_figures() {
    static const std::vector<memory_figure> figures = {
        {schema::ds_peak_host_bytes, "host MiB", "peak_host_mib"},
        {schema::ds_peak_device_bytes, "device MiB", "peak_device_mib"},
        {schema::ds_peak_rss_bytes, "RSS MiB", "peak_rss_mib"},
        {schema::ds_param_bytes, "params MiB", "param_mib"},
        {schema::ds_grad_bytes, "grads MiB", "grad_mib"},
        {schema::ds_optimizer_bytes, "optimizer MiB", "optimizer_mib"},
        {schema::ds_activation_bytes, "activations MiB", "activation_mib"},
        {schema::ds_comm_buffer_bytes, "comm buffers MiB", "comm_buffer_mib"},
        {schema::ds_step_peak_device_bytes, "step device MiB", "step_peak_device_mib"}};
    return figures;
}

std::optional<double> peak_memory(const pooled_case& c, const std::string& name) {
    std::optional<double> out;
    for (const case_data* launch : c.launches)
        if (auto v = launch->max_memory(name))
            out = std::max(out.value_or(0.0), *v);
    if (name.find("device") != std::string::npos && out && *out == 0)
        return std::nullopt; // a CPU case: no device memory to speak of
    return out;
}

std::optional<int> cores_in_use(const pooled_case& c) {
    if (c.launches.empty())
        return std::nullopt;
    const case_data& d = *c.launches.front();
    if (d.threads.empty() || d.threads.size() != d.affinity_cores.size())
        return std::nullopt;
    int total = 0;
    for (std::size_t r = 0; r < d.threads.size(); ++r)
        total += std::min(d.threads[r], d.affinity_cores[r]);
    return total;
}

std::string superlinear_note(const pooled_case& base, const pooled_case& point, double efficiency) {
    if (!std::isfinite(efficiency) || efficiency <= 1.1)
        return "";
    const auto a = cores_in_use(base), b = cores_in_use(point);
    const double rel = static_cast<double>(point.world_size) / base.world_size;
    if (a && b && *b > *a * rel + 0.5)
        return fmt::format("suspect: efficiency {:.2f} > 1.1: P={} ran on {} core(s) in all, the "
                           "base P={} on {} (threads or CPU binding differ; fix --threads and "
                           "bind with --bind-to none or --map-by slot:PE=N)",
                           efficiency, point.world_size, *b, base.world_size, *a);
    return fmt::format("suspect: efficiency {:.2f} > 1.1 is superlinear: check the base P={}'s "
                       "threads and CPU binding{}, or cache effects",
                       efficiency, base.world_size,
                       a ? "" : " (not recorded in ringscale/1 files)");
}

std::string oversubscription_note(const pooled_case& c) {
    if (c.launches.empty())
        return "";
    const case_data& d = *c.launches.front();
    if (const auto w = d.file->meta.find(schema::meta_attr::warnings); w != d.file->meta.end()) {
        const std::string& text = w->second.text;
        const auto at = text.find("oversubscribed");
        if (at != std::string::npos)
            return text.substr(at, text.find('\n', at) - at);
    }
    if (d.threads.empty())
        return "";
    const int threads = *std::max_element(d.threads.begin(), d.threads.end());
    int cores = d.affinity_cores.empty()
                    ? 0
                    : *std::max_element(d.affinity_cores.begin(), d.affinity_cores.end());
    if (const auto m = d.machine.find(schema::machine_ds::load_cores); m != d.machine.end())
        for (double v : m->second)
            if (std::isfinite(v))
                cores = std::max(cores, static_cast<int>(v));
    const int per_node = c.ranks_per_node > 0 ? c.ranks_per_node : c.world_size;
    if (cores <= 0 || per_node * threads <= cores)
        return "";
    return fmt::format("oversubscribed: {} rank(s) x {} thread(s) = {} threads on {} core(s): "
                       "ranks wait for a core, so an efficiency cannot pass {:.2f}",
                       per_node, threads, per_node * threads, cores,
                       static_cast<double>(cores) / (per_node * threads));
}

std::vector<std::string> suspect_efficiencies(const std::vector<scaling_result>& results) {
    std::vector<std::string> out;
    for (const scaling_result& r : results) {
        const pooled_case* base = r.points.empty() ? nullptr : r.points.front().source;
        for (const scaling_point& p : r.points)
            if (p.p == r.base_p)
                base = p.source;
        for (const scaling_point& p : r.points) {
            const std::string note = base ? superlinear_note(*base, *p.source, p.efficiency) : "";
            if (!note.empty())
                out.push_back(fmt::format("{} P={}: {}", r.label, p.p, note));
        }
    }
    return out;
}

std::vector<memory_change> memory_regressions(const comparison& cmp, double threshold) {
    std::vector<memory_change> out;
    for (const case_comparison& m : cmp.matched)
        for (const char* name : {schema::ds_peak_host_bytes, schema::ds_peak_device_bytes,
                                 schema::ds_peak_rss_bytes}) {
            const pooled_case& base = m.base_all ? *m.base_all : *m.base;
            const pooled_case& next = m.next_all ? *m.next_all : *m.next;
            const auto a = peak_memory(base, name), b = peak_memory(next, name);
            const double floor = std::string(name) == schema::ds_peak_rss_bytes ? 16 * mib : mib;
            if (a && b && *b > *a * (1 + threshold) && *b - *a > floor)
                out.push_back({&m, name, *a, *b});
        }
    return out;
}

std::string describe(const memory_change& m) {
    return fmt::format("memory regression: {} P={}: {} (max over ranks) {:.1f} MiB -> {:.1f} MiB "
                       "({:+.1f}%)",
                       m.match->base->label(), m.match->base->world_size, m.dataset,
                       m.base_bytes / mib, m.new_bytes / mib,
                       100 * (m.new_bytes / m.base_bytes - 1));
}

} // namespace ringscale::analysis
