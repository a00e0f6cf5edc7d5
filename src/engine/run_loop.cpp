#include "src/engine/run_loop.hpp"

#include "kernels/event_recorder.hpp"

#include "src/base/error.hpp"
#include "src/base/memory.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/affinity.hpp"
#include "src/engine/case_identity.hpp"
#include "src/engine/hw_counters.hpp"
#include "src/engine/metadata.hpp"
#include "src/engine/sweep.hpp"
#include "src/engine/trace_gather.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace ringscale {

namespace {

jobs::attr_value typed(const std::string& text) {
    char* end = nullptr;
    const long long i = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end == text.c_str() + text.size())
        return static_cast<std::int64_t>(i);
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size())
        return d;
    return text;
}

std::string case_label(const scheduled_case& pc) {
    std::string label = pc.plan.job;
    for (const auto& [k, v] : pc.plan.values.values())
        label += fmt::format(" {}={}", k, v.text);
    return label;
}

// Gather one value per rank into a vector of `world` values (collective).
template <class T>
std::vector<T> gather_each(comm::communicator& c, T mine, comm::dtype type) {
    std::vector<T> all(static_cast<std::size_t>(c.size()));
    c.all_gather(&mine, all.data(), 1, type);
    return all;
}

// [rows] per rank -> [rows][world] (collective).
std::vector<double> gather_rows(comm::communicator& c, const std::vector<double>& mine) {
    const std::size_t rows = mine.size(), world = static_cast<std::size_t>(c.size());
    std::vector<double> by_rank(rows * world);
    if (rows > 0)
        c.all_gather(mine.data(), by_rank.data(), rows, comm::dtype::f64);
    std::vector<double> out(rows * world);
    for (std::size_t r = 0; r < world; ++r)
        for (std::size_t i = 0; i < rows; ++i)
            out[i * world + r] = by_rank[r * rows + i];
    return out;
}

/// Each step's CPU time on this rank (whole, and in its compute and comm_wait phases) and its
/// hardware counts, for schema::cpu_datasets. Opened after setup: the threads it started
/// (BLAS, workers) are counted with the ones they start later.
class step_meter {
  public:
    void begin() {
        m_cpu_start = process_cpu_s();
        m_hw_start = m_hw.read();
    }
    void end(const phase_timer& t) {
        const hw_count hw = m_hw.read();
        m_rows[schema::ds_cpu_s].push_back(process_cpu_s() - m_cpu_start);
        m_rows[schema::ds_compute_cpu_s].push_back(t.compute_cpu_s());
        m_rows[schema::ds_comm_wait_cpu_s].push_back(t.comm_wait_cpu_s());
        m_rows[schema::ds_instructions].push_back(hw.instructions - m_hw_start.instructions);
        m_rows[schema::ds_cycles].push_back(hw.cycles - m_hw_start.cycles);
    }
    /// Every rank's rows into rec.cpu, and whether the counts were measured on every rank
    /// into its outcome (collective).
    void gather(comm::communicator& world, case_record& rec) const {
        for (const auto& [name, mine] : m_rows)
            rec.cpu[name] = gather_rows(world, mine);
        const std::int64_t here = m_hw.supported() ? 1 : 0;
        std::int64_t all = 0;
        world.allreduce(&here, &all, 1, comm::dtype::i64, comm::reduce_op::min);
        rec.outcome[schema::attr::hw_counters] =
            all == 1 || here == 0 ? m_hw.status() : std::string("not supported: on another rank");
    }

  private:
    hw_counters m_hw;
    double m_cpu_start = 0;
    hw_count m_hw_start;
    std::map<std::string, std::vector<double>> m_rows;
};

// Make a validation outcome identical on every rank (collective).
jobs::validation agree(comm::communicator& c, jobs::validation v) {
    double err = v.max_abs_err, tol = v.tolerance;
    std::int64_t wrong = static_cast<std::int64_t>(v.wrong), ok = v.ok ? 1 : 0;
    c.allreduce(&v.max_abs_err, &err, 1, comm::dtype::f64, comm::reduce_op::max);
    c.allreduce(&v.tolerance, &tol, 1, comm::dtype::f64, comm::reduce_op::max);
    std::int64_t w = 0, o = 0;
    c.allreduce(&wrong, &w, 1, comm::dtype::i64, comm::reduce_op::sum);
    c.allreduce(&ok, &o, 1, comm::dtype::i64, comm::reduce_op::min);
    v.max_abs_err = err;
    v.tolerance = tol;
    v.wrong = static_cast<std::uint64_t>(w);
    v.ok = o == 1;
    if (!v.ok && v.detail.empty())
        v.detail = fmt::format("validation failed: max abs error {:.3g} (tolerance {:.3g}), {} "
                               "wrong elements",
                               err, tol, w);
    return v;
}

// Threads and allowed cores of every rank (collective): derived, per rank.
void record_threads(case_record& rec, comm::communicator& world, int threads) {
    const cpu_affinity mine = current_affinity();
    rec.threads = gather_each<std::int32_t>(world, threads, comm::dtype::i32);
    rec.affinity_cores = gather_each<std::int32_t>(world, mine.cores, comm::dtype::i32);
    rec.affinity_list = gather_strings(world, mine.list);
    rec.derived[schema::attr::threads_per_rank] = static_cast<std::int64_t>(threads);
}

// What the machine did over the iterations, and the mark it earns (collective).
void record_machine(case_record& rec, comm::communicator& world, const machine_context& machine,
                    const machine_window& window) {
    world.barrier();
    rec.machine = close_window(world, machine, window);
    const std::string why = machine::contention_reason(rec.machine);
    rec.outcome[schema::attr::contended] = std::int64_t{why.empty() ? 0 : 1};
    rec.outcome[schema::attr::contention] = why;
}

} // namespace

jobs::attr_map param_attrs(const jobs::params& p) {
    jobs::attr_map attrs;
    for (const auto& [name, value] : p.values()) {
        std::string key = name;
        std::replace(key.begin(), key.end(), '-', '_');
        attrs[key] = typed(value.text);
    }
    return attrs;
}

std::vector<scheduled_case> plan_launch(const std::vector<const jobs::job*>& jobs,
                                        const launch_config& cfg, const jobs::launch_info& launch) {
    std::vector<scheduled_case> cases;
    for (const jobs::job* j : jobs)
        for (auto& plan : jobs::plan_job(*j, cfg.params, launch))
            cases.push_back({j, std::move(plan)});
    jobs::check_case_count(cases.size(), static_cast<std::uint64_t>(std::max(cfg.repeat, 1)));
    const bool on_device = launch.device == device_kind::cuda;
    const std::uint64_t budget =
        on_device ? launch.device_bytes_per_rank : launch.host_bytes_per_rank;
    for (auto& pc : cases) {
        if (!pc.plan.skip_reason.empty() || pc.plan.bytes_per_rank <= budget)
            continue;
        if (on_device) { // device memory: skip and go on (the estimate is the job's own)
            pc.plan.skip_reason =
                fmt::format("needs {} of device memory per rank, device has {}",
                            format_bytes(pc.plan.bytes_per_rank), format_bytes(budget));
            continue;
        }
        const std::string why =
            fmt::format("needs {} of memory per rank, {} available",
                        format_bytes(pc.plan.bytes_per_rank), format_bytes(budget));
        if (!pc.plan.skippable)
            throw config_error(fmt::format("case '{}' {}: choose smaller sizes or more ranks",
                                           case_label(pc), why));
        pc.plan.skip_reason = why;
    }
    return interleave_repeats(cases, cfg.repeat);
}

std::vector<scheduled_case> interleave_repeats(const std::vector<scheduled_case>& cases,
                                               int repeats) {
    std::vector<scheduled_case> out;
    out.reserve(cases.size() * static_cast<std::size_t>(std::max(repeats, 1)));
    for (int r = 0; r < std::max(repeats, 1); ++r)
        for (const scheduled_case& pc : cases) {
            out.push_back(pc);
            out.back().repeat = r;
        }
    return out;
}

case_record run_case(const scheduled_case& pc, const launch_config& cfg, jobs::run_context& ctx,
                     const machine_context* machine) {
    // Results, agreement and the iteration barrier go over the host-memory control
    // communicator; the job's own communication over ctx.world (device buffers on cuda).
    comm::communicator& world = ctx.control;
    kernels::executor& dev = ctx.dev;
    case_record rec;
    rec.world = world.size();
    rec.identity = case_identity(pc, cfg, ctx.launch);
    rec.run = case_run_attrs(cfg);
    if (cfg.repeat > 1) // which repetition: a replicate, not part of the case's identity
        rec.run[schema::attr::repeat] = static_cast<std::int64_t>(pc.repeat);
    rec.derived = {{schema::attr::flops_per_iter, 0.0}, {schema::attr::comm_bytes_per_iter, 0.0}};
    if (pc.plan.values.has(schema::attr::variant) &&
        pc.plan.variant != pc.plan.values.text(schema::attr::variant))
        rec.derived[schema::attr::variant_label] =
            pc.plan.variant; // e.g. hybrid/u2: the degree P gave it
    rec.outcome = {{schema::attr::status, std::string(schema::status::ok)},
                   {schema::attr::error, std::string("")},
                   {schema::attr::validated, std::int64_t{0}},
                   {schema::attr::max_abs_err, 0.0},
                   {schema::attr::tolerance, 0.0}};
    record_threads(rec, world, ctx.threads_per_rank);
    auto fail = [&](const std::string& status, const std::string& why) {
        rec.outcome[schema::attr::status] = status;
        rec.outcome[schema::attr::error] = why;
        rec.peak_host_bytes.assign(static_cast<std::size_t>(rec.world), 0);
        rec.peak_device_bytes = rec.peak_rss_bytes = rec.peak_host_bytes;
        return rec;
    };
    if (!pc.plan.skip_reason.empty())
        return fail(schema::status::skipped, pc.plan.skip_reason);

    // Build and set up; an error here (raised alike on every rank) fails only this case.
    host_memory::reset_peak();
    dev.reset_device_peak();
    reset_peak_rss();
    std::unique_ptr<jobs::case_runner> c;
    std::string setup_error;
    try {
        c = pc.job->make_case(pc.plan, ctx);
        sort_job_attrs(c->describe(), rec.identity, rec.derived, rec.outcome);
        c->setup();
        dev.synchronize();
    } catch (const config_error&) {
        throw;
    } catch (const std::exception& e) {
        setup_error = e.what();
    }
    const std::int64_t ok_here = setup_error.empty() ? 1 : 0;
    std::int64_t ok_all = 0;
    world.allreduce(&ok_here, &ok_all, 1, comm::dtype::i64, comm::reduce_op::min);
    if (ok_all == 0)
        return fail(schema::status::failed,
                    setup_error.empty() ? "setup failed on another rank" : setup_error);

    rec.rows = cfg.warmup + cfg.iters;
    std::vector<double> t(rec.rows), tc(rec.rows), tw(rec.rows);
    phase_timer timer;
    dev.finish_iteration(timer); // drop anything timed during setup
    step_meter meter;
    std::optional<machine_window> window;
    if (machine) { // every rank opens its window together
        world.barrier();
        window = open_window(*machine);
    }
    // --trace: a bounded buffer of the timed iterations' events (the warm-up's are not kept).
    std::optional<trace::recorder> traced;
    if (cfg.trace > 0)
        traced.emplace(trace_max_events);
    std::optional<trace::activation> tracing;
    if (traced)
        tracing.emplace(&*traced);
    for (int i = 0; i < rec.rows; ++i) {
        c->before_iteration(); // untimed
        dev.synchronize();
        // Every rank's device is idle and every rank has arrived: the step starts together.
        world.barrier();
        timer.reset();
        meter.begin();
        const double start = now_s();
        trace::recorder* kept = traced && i >= cfg.warmup ? &*traced : nullptr;
        if (kept)
            kept->begin_iteration(i, start); // the time base of the iteration's events
        // A GPU's events: its start event now, resolved by finish_iteration onto `start`.
        if (kernels::event_recorder* events = dev.events())
            events->begin_iteration(start, kept);
        c->iterate(timer);
        dev.finish_iteration(timer); // waits for the device, adds its timed phases
        t[i] = now_s() - start;
        meter.end(timer);
        tc[i] = timer.compute_s();
        tw[i] = timer.comm_wait_s();
        rec.is_warmup.push_back(i < cfg.warmup ? 1 : 0);
        if (traced)
            traced->end_iteration();
    }
    tracing.reset();
    if (window)
        record_machine(rec, world, *machine, *window);
    const bool do_validate =
        cfg.validate == validate_mode::on ||
        (cfg.validate == validate_mode::automatic && pc.plan.validate_by_default);
    jobs::validation v;
    if (do_validate) {
        v = agree(world, c->validate());
        phase_timer discard;
        dev.finish_iteration(discard);
    }
    const jobs::case_extras extras = c->extras();
    rec.time_s = gather_rows(world, t);
    rec.compute_s = gather_rows(world, tc);
    rec.comm_wait_s = gather_rows(world, tw);
    meter.gather(world, rec);
    if (traced)
        gather_trace(world, *traced, cfg.trace, ctx.launch.nodes.for_world(world.size()).node_of,
                     rec);
    rec.peak_host_bytes =
        gather_each<std::uint64_t>(world, host_memory::peak_bytes(), comm::dtype::i64);
    rec.peak_rss_bytes = gather_each<std::uint64_t>(world, peak_rss_bytes(), comm::dtype::i64);
    rec.peak_device_bytes =
        gather_each<std::uint64_t>(world, dev.device_peak_bytes(), comm::dtype::i64);
    for (const auto& [name, value] : extras.per_rank)
        rec.per_rank[name] = gather_each<double>(world, value, comm::dtype::f64);
    // After the peaks were read: the measurement's buffers are not the case's.
    if (pc.plan.measure_accuracy)
        sort_job_attrs(c->accuracy(), rec.identity, rec.derived, rec.outcome);
    rec.per_iteration = extras.per_iteration;
    rec.numerics = extras.numerics;
    sort_job_attrs(extras.attrs, rec.identity, rec.derived, rec.outcome);
    rec.outcome[schema::attr::validated] = std::int64_t{v.checked ? 1 : 0};
    rec.outcome[schema::attr::max_abs_err] = v.max_abs_err;
    rec.outcome[schema::attr::tolerance] = v.tolerance;
    rec.outcome[schema::attr::wrong_elements] = static_cast<std::int64_t>(v.wrong);
    if (v.checked && !v.ok) {
        rec.outcome[schema::attr::status] = std::string(schema::status::failed);
        rec.outcome[schema::attr::error] = v.detail;
    }
    return rec;
}

} // namespace ringscale
