#include "src/engine/machine_probe.hpp"

#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>

namespace ringscale {

namespace ds = schema::machine_ds;

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr int mask_words = 16; // 1024 cores (CPU_SETSIZE)

// What each rank contributes, gathered as one row of doubles per rank.
enum field : int {
    f_busy_s,
    f_own_cpu_s,
    f_wall_s,
    f_cores,
    f_steal_s,
    f_iowait_s,
    f_total_s,
    f_run_wait_s,
    f_nivcsw,
    f_cpu_mhz,
    f_gpu_clock,
    f_gpu_throttle,
    f_gpu_others,
    n_fields
};

std::vector<double> my_row(const machine_context& ctx, const machine_window& w) {
    const machine::proc_stat stat = machine::read_proc_stat();
    const machine::process_sample p = machine::sample_process();
    const machine::core_window cw =
        machine::window_on(w.stat, stat, ctx.cores, machine::ticks_per_second());
    std::vector<double> row(n_fields, nan);
    row[f_busy_s] = cw.cores > 0 ? cw.busy_s : nan;
    row[f_own_cpu_s] = p.cpu_s - w.process.cpu_s;
    row[f_wall_s] = p.wall_s - w.process.wall_s;
    row[f_cores] = cw.cores;
    row[f_steal_s] = cw.steal_s;
    row[f_iowait_s] = cw.iowait_s;
    row[f_total_s] = cw.total_s;
    row[f_run_wait_s] = p.run_wait_s - w.process.run_wait_s; // NaN without schedstat
    row[f_nivcsw] = static_cast<double>(p.nivcsw - w.process.nivcsw);
    row[f_cpu_mhz] = machine::cpu_mhz(machine::allowed_cores());
    if (!ctx.gpu_bus_id.empty()) {
        const kernels::gpu_sample g = kernels::sample_gpu(ctx.gpu_bus_id);
        if (g.known && w.gpu.known) {
            row[f_gpu_clock] = std::min(g.sm_clock_mhz, w.gpu.sm_clock_mhz);
            // Bits above 2^53 are not NVML's; keep the value exact in a double.
            row[f_gpu_throttle] =
                static_cast<double>((g.throttle | w.gpu.throttle) & ((std::uint64_t{1} << 53) - 1));
            row[f_gpu_others] =
                std::max(0, std::max(g.processes, w.gpu.processes) - ctx.gpu_ranks_sharing);
        }
    }
    return row;
}

} // namespace

machine_context make_machine_context(comm::communicator& world, int threads,
                                     const std::string& gpu_bus_id, int gpu_ranks_sharing) {
    const int n = world.size();
    std::vector<std::int64_t> mine(mask_words + 2, 0);
    for (const int c : machine::allowed_cores())
        if (c < 64 * mask_words)
            mine[static_cast<std::size_t>(c / 64)] |= std::int64_t{1} << (c % 64);
    mine[mask_words] = static_cast<std::int64_t>(fnv1a64(machine::boot_id()));
    mine[mask_words + 1] = threads;
    std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(n));
    world.all_gather(mine.data(), all.data(), mine.size(), comm::dtype::i64);
    machine_context ctx;
    ctx.gpu_bus_id = gpu_bus_id;
    ctx.gpu_ranks_sharing = std::max(gpu_ranks_sharing, 1);
    std::map<std::int64_t, int> machines; // boot id hash -> machine index, first seen first
    std::vector<std::int64_t> mask(mask_words, 0);
    for (int r = 0; r < n; ++r) {
        const std::int64_t* row = all.data() + static_cast<std::size_t>(r) * mine.size();
        const auto [it, added] =
            machines.emplace(row[mask_words], static_cast<int>(machines.size()));
        ctx.machine_of.push_back(it->second);
        ctx.threads.push_back(static_cast<int>(row[mask_words + 1]));
        if (row[mask_words] == mine[mask_words])
            for (int k = 0; k < mask_words; ++k)
                mask[static_cast<std::size_t>(k)] |= row[k];
    }
    for (int c = 0; c < 64 * mask_words; ++c)
        if ((mask[static_cast<std::size_t>(c / 64)] >> (c % 64)) & 1)
            ctx.cores.push_back(c);
    return ctx;
}

machine_window open_window(const machine_context& ctx) {
    machine_window w;
    w.stat = machine::read_proc_stat();
    w.process = machine::sample_process();
    if (!ctx.gpu_bus_id.empty())
        w.gpu = kernels::sample_gpu(ctx.gpu_bus_id);
    return w;
}

machine::machine_fields close_window(comm::communicator& world, const machine_context& ctx,
                                     const machine_window& w) {
    const std::vector<double> mine = my_row(ctx, w);
    const auto n = static_cast<std::size_t>(world.size());
    std::vector<double> all(n * n_fields);
    world.all_gather(mine.data(), all.data(), n_fields, comm::dtype::f64);
    auto v = [&](std::size_t r, field f) { return all[r * n_fields + f]; };
    std::map<int, double> own_cpu, own_threads; // per machine
    for (std::size_t r = 0; r < n && r < ctx.machine_of.size(); ++r) {
        own_cpu[ctx.machine_of[r]] += v(r, f_own_cpu_s);
        own_threads[ctx.machine_of[r]] += ctx.threads[r];
    }
    machine::machine_fields out;
    for (const std::string& name : schema::machine_datasets())
        out[name].assign(n, nan);
    const double hz = machine::ticks_per_second();
    for (std::size_t r = 0; r < n && r < ctx.machine_of.size(); ++r) {
        const int m = ctx.machine_of[r];
        const double wall = std::max(v(r, f_wall_s), 1e-9), cores = v(r, f_cores);
        out[ds::foreign_load][r] = (v(r, f_busy_s) - own_cpu[m]) / wall;
        // Each core's counter is read twice, to a tick each time.
        out[ds::load_resolution][r] = cores > 0 ? 2 * cores / hz / wall : nan;
        out[ds::load_cores][r] = cores > 0 ? cores : nan;
        out[ds::own_threads][r] = own_threads[m];
        const double total = v(r, f_total_s);
        out[ds::steal][r] = total > 0 ? std::clamp(v(r, f_steal_s) / total, 0.0, 1.0) : nan;
        out[ds::iowait][r] = total > 0 ? std::clamp(v(r, f_iowait_s) / total, 0.0, 1.0) : nan;
        out[ds::run_wait][r] = std::max(v(r, f_run_wait_s), 0.0) / wall;
        out[ds::nivcsw][r] = std::max(v(r, f_nivcsw), 0.0);
        out[ds::cpu_mhz][r] = v(r, f_cpu_mhz);
        out[ds::gpu_sm_clock_mhz][r] = v(r, f_gpu_clock);
        out[ds::gpu_throttle][r] = v(r, f_gpu_throttle);
        out[ds::gpu_other_processes][r] = v(r, f_gpu_others);
    }
    if (ctx.gpu_bus_id.empty())
        for (const char* name : {ds::gpu_sm_clock_mhz, ds::gpu_throttle, ds::gpu_other_processes})
            out.erase(name);
    return out;
}

std::string gpu_state_note(const machine_context& ctx) {
    if (ctx.gpu_bus_id.empty())
        return "";
    const kernels::gpu_sample g = kernels::sample_gpu(ctx.gpu_bus_id);
    return g.known ? "" : g.why;
}

} // namespace ringscale
