#include "src/launcher/launcher.hpp"

#include "comm/mpi_communicator.hpp"
#include "jobs/registry.hpp"
#include "kernels/blas_core.hpp"
#include "kernels/executor.hpp"
#include "kernels/threads.hpp"
#include "src/base/error.hpp"
#include "src/base/memory.hpp"
#include "src/base/parse.hpp"
#include "src/base/text_escape.hpp"
#include "src/engine/affinity.hpp"
#include "src/engine/device_binding.hpp"
#include "src/engine/guard.hpp"
#include "src/engine/launch_monitor.hpp"
#include "src/engine/machine_probe.hpp"
#include "src/engine/metadata.hpp"
#include "src/engine/node_metadata.hpp"
#include "src/engine/results_writer.hpp"
#include "src/engine/resume.hpp"
#include "src/engine/run_loop.hpp"
#include "src/launcher/blas_restart.hpp"
#include "src/launcher/cli.hpp"
#include "src/launcher/crash_report.hpp"
#include "src/launcher/early_stop.hpp"
#include "src/launcher/live_table.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <set>
#include <unistd.h>

namespace ringscale {

const char* tool_version();

namespace {

// Everything decided before any work: parsed config, plans, output path.
struct prepared {
    launch_config cfg;
    std::vector<scheduled_case> cases;
    jobs::launch_info launch;
    int threads = 1;
    std::vector<std::string> keys; // case_key of each case
    std::string output_path;       // rank 0 only
    std::vector<std::string> done; // rank 0, --resume: where each case was completed, or ""
};

// --repeat: repetition r > 0 of a case gets the key "<key>-r<r>", so that --resume tells
// repetitions apart; repetition 0 keeps the plain key (a launch without --repeat is one).
void tag_repetitions(prepared& p) {
    for (std::size_t i = 0; i < p.cases.size() && i < p.keys.size(); ++i)
        if (p.cases[i].repeat > 0)
            p.keys[i] += fmt::format("-r{}", p.cases[i].repeat);
}

// Rank 0, before any work: what --resume skips, and whether the rest fits on the disk.
void check_output(prepared& p) {
    tag_repetitions(p); // the keys are read only here and by rank 0's writer
    p.done.assign(p.cases.size(), "");
    if (p.cfg.resume)
        p.done = find_completed(p.keys, p.cfg.output);
    // The metadata holds the command line and the resolved config: a long one needs room too.
    std::uint64_t bytes = estimated_metadata_bytes(p.cfg, p.launch.world_size);
    for (std::size_t i = 0; i < p.cases.size(); ++i)
        if (p.done[i].empty())
            bytes += estimated_case_bytes(p.cfg.warmup + p.cfg.iters, p.launch.world_size);
    const std::string problem = room_problem(p.output_path, bytes);
    if (!problem.empty())
        throw config_error(fmt::format("--output: '{}': {}", p.output_path, problem));
}

// Parse on every rank. Returns the error text instead of throwing.
std::optional<prepared> parse(int argc, char** argv, comm::communicator& world,
                              std::string& message, std::string& error_text) {
    try {
        // Collective, before anything that may fail on one rank alone.
        const comm::node_layout nodes = comm::detect_node_layout(world);
        cli_result cli = parse_cli(argc, argv);
        if (!cli.config) {
            message = cli.message;
            return std::nullopt;
        }
        prepared p;
        p.cfg = std::move(*cli.config);
        int local_rank = 0, local_size = 1;
        local_rank_info(local_rank, local_size);
        p.threads = kernels::threads_per_rank(p.cfg.threads, local_size);
        p.launch.world_size = world.size();
        p.launch.nodes = nodes;
        p.launch.device = p.cfg.device;
        p.launch.comm = p.cfg.comm;
        p.launch.accuracy = p.cfg.accuracy;
        p.launch.accuracy_sample = p.cfg.accuracy_sample;
        p.launch.iterations = p.cfg.warmup + p.cfg.iters;
        // Leave a tenth of the node's free memory to MPI, the OS and the page cache.
        p.launch.host_bytes_per_rank =
            available_host_bytes() / static_cast<std::uint64_t>(local_size) / 10 * 9;
        // Inconsistent options first: wrong in every build, whether it has CUDA and NCCL or not.
        if (p.cfg.comm == comm_kind::nccl && p.cfg.device != device_kind::cuda)
            throw config_error("--comm nccl needs --device cuda (NCCL moves GPU memory; use "
                               "--comm mpi on the CPU)");
        kernels::require_compiled(p.cfg.device);
        comm::require_compiled(p.cfg.comm);
        return p;
    } catch (const std::exception& e) {
        error_text = e.what();
    }
    return std::nullopt;
}

// Plan on every rank, once the devices are bound. Returns the error text instead of throwing.
std::string plan(prepared& p, comm::communicator& world, const device_binding& gpu) {
    try {
        p.launch.device_bytes_per_rank = gpu.budget_bytes;
        p.launch.gpu_cc_major = gpu.gpu.cc_major;
        p.launch.gpu_cc_minor = gpu.gpu.cc_minor;
        p.cases = plan_launch(p.cfg, p.launch);
        if (p.cases.empty())
            throw config_error("no cases to run");
        for (const auto& pc : p.cases)
            p.keys.push_back(case_key(pc, p.cfg, p.launch));
        if (world.rank() == 0) {
            for (const auto& note : p.cfg.notes)
                std::fprintf(stderr, "ringscale: note: %s\n", terminal_text(note).c_str());
            std::set<std::string> warned; // each once, however many cases share it
            for (const auto& pc : p.cases)
                if (!pc.plan.note.empty() && warned.insert(pc.plan.note).second)
                    std::fprintf(stderr, "ringscale: warning: %s\n",
                                 terminal_text(pc.plan.note).c_str());
        }
        if (world.rank() == 0 && !p.cfg.dry_run) {
            p.output_path = resolve_output_path(p.cfg, world.size());
            check_output(p);
        }
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// Collective: the lowest rank holding an error prints it; true if any rank had one.
bool any_error(comm::communicator& world, const std::string& error_text) {
    const std::int64_t mine = error_text.empty() ? world.size() : world.rank();
    std::int64_t first = 0;
    world.allreduce(&mine, &first, 1, comm::dtype::i64, comm::reduce_op::min);
    if (first == world.rank())
        std::fprintf(stderr, "ringscale: error: %s\n", terminal_text(error_text).c_str());
    return first < world.size();
}

// Collective: every rank resolved the same configuration (hash broadcast from rank 0).
// Returns the error text on rank 0 when they differ, "" otherwise.
std::string check_consensus(comm::communicator& world, const launch_config& cfg) {
    const std::int64_t mine = static_cast<std::int64_t>(fnv1a64(cfg.resolved_text));
    std::int64_t root = mine;
    world.broadcast(&root, 1, comm::dtype::i64, 0);
    const std::int64_t differs = root != mine ? 1 : 0;
    std::int64_t any = 0;
    world.allreduce(&differs, &any, 1, comm::dtype::i64, comm::reduce_op::max);
    if (any == 0 || world.rank() != 0)
        return "";
    return "ranks resolved different configurations (different job files or arguments per "
           "rank?)";
}

void print_plan(const std::vector<scheduled_case>& cases) {
    const bool repeated = !cases.empty() && cases.back().repeat > 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& pc = cases[i];
        std::string params;
        for (const auto& [k, v] : pc.plan.values.values())
            params += fmt::format(" {}={}", k, v.text);
        if (repeated)
            params += fmt::format(" repeat={}", pc.repeat);
        const std::string skip =
            pc.plan.skip_reason.empty() ? "" : " [skip: " + pc.plan.skip_reason + "]";
        std::printf("case %zu: %s\n", i, terminal_text(pc.plan.job + params + skip).c_str());
    }
}

// Collective: indices of the cases to run, after --resume (rank 0 decided, all agree).
std::vector<std::size_t> cases_to_run(const prepared& p, comm::communicator& world) {
    std::vector<std::int32_t> skip(p.cases.size(), 0);
    if (world.rank() == 0)
        for (std::size_t i = 0; i < skip.size(); ++i)
            skip[i] = p.done[i].empty() ? 0 : 1;
    world.broadcast(skip.data(), skip.size(), comm::dtype::i32, 0);
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < skip.size(); ++i)
        if (!skip[i])
            todo.push_back(i);
    if (world.rank() == 0 && todo.size() < skip.size())
        std::printf("# --resume: %zu of %zu case(s) already completed in '%s'; running the "
                    "other %zu\n",
                    skip.size() - todo.size(), skip.size(), terminal_text(p.cfg.output).c_str(),
                    todo.size());
    return todo;
}

// Rank 0: create the file and let the watchdog close it (incomplete) before an abort; a stop
// while it is created waits for it (a file cut before its first flush cannot be read).
std::unique_ptr<results_writer> open_writer(const prepared& p, const run_metadata& md,
                                            launch_guard& guard) {
    std::unique_ptr<results_writer> writer;
    guard.set_before_abort_after([&]() -> std::function<void()> {
        writer = std::make_unique<results_writer>(p.output_path, p.cfg, md);
        if (p.cfg.resume)
            writer->write_resumed(p.done);
        return [w = writer.get()] {
            const bool closed = w->finish_incomplete_within(8000);
            std::fprintf(stderr, "ringscale: rank 0: %s%s\n",
                         closed ? "results (incomplete): " : "results file busy; left as ",
                         terminal_text(closed ? w->final_path() : w->temp_path()).c_str());
        };
    });
    return writer;
}

// Collective: rank 0 warns once when the MPI launcher's binding leaves a rank fewer cores
// than its share of the node (e.g. Open MPI binds to one core at np <= 2), and once when the
// ranks' threads outnumber the cores they may use (np=4 on 2 cores), and on `cpu` jobs once
// when OpenBLAS runs a generic core on this CPU; the note of a restart for OpenBLAS's core
// (blas_restart.hpp). Returns the lines on rank 0 (the file keeps them for the report), "" else.
std::string warn_about_binding(comm::communicator& world, int local_size, int threads, bool cpu) {
    // The cores this rank's machine's ranks may use together, and their threads.
    const machine_context ctx = make_machine_context(world, threads, "", 1);
    std::int64_t node_threads = 0;
    const int me = ctx.machine_of.at(static_cast<std::size_t>(world.rank()));
    for (std::size_t r = 0; r < ctx.machine_of.size(); ++r)
        node_threads += ctx.machine_of[r] == me ? ctx.threads[r] : 0;
    const auto union_cores = static_cast<int>(std::max<std::size_t>(1, ctx.cores.size()));
    const std::int64_t mine[3] = {current_affinity().cores, -sysconf(_SC_NPROCESSORS_ONLN),
                                  -local_size};
    std::int64_t least[3] = {0, 0, 0}; // fewest cores; most node cores and ranks per node
    world.allreduce(mine, least, 3, comm::dtype::i64, comm::reduce_op::min);
    const int min_cores = static_cast<int>(least[0]);
    const int node_cores = static_cast<int>(-least[1]);
    const int ranks_per_node = static_cast<int>(-least[2]);
    // Rank 0 names its own node's figures; another node's shows in its cases' marks.
    if (world.rank() != 0)
        return "";
    std::string all;
    for (const std::string& line :
         {affinity_warning(min_cores, node_cores, ranks_per_node),
          oversubscription_warning(static_cast<int>(node_threads), union_cores, threads, min_cores),
          cpu ? kernels::blas_core_warning() : std::string(), blas_restart_note()})
        if (!line.empty()) {
            std::fprintf(stderr, "%s\n", terminal_text(line).c_str());
            all += (all.empty() ? "" : "\n") + line;
        }
    std::fflush(stderr);
    return all;
}

int run_all(prepared& p, comm::communicator& world, const device_binding& gpu,
            launch_guard& guard) {
    const std::vector<std::size_t> todo = cases_to_run(p, world);
    if (todo.empty()) {
        if (world.rank() == 0)
            std::printf("# nothing to run: every case is already completed\n");
        return 0;
    }
    const timer_info timer = measure_timer();
    kernels::set_blas_threads(p.threads);
    run_metadata md = collect_metadata(world, p.cfg, timer, p.threads);
    add_gpu_metadata(md, gpu, world);
    add_node_metadata(md, world, p.cfg.device == device_kind::cuda);
    md.attrs[schema::meta_attr::warnings] =
        warn_about_binding(world, md.my_local_size, p.threads, p.cfg.device == device_kind::cpu);
    // On the GPU the jobs' buffers live on the device: NCCL, or MPI staged through pinned
    // host memory. The host-memory world stays the control plane (results, agreement).
    std::unique_ptr<comm::communicator> device_world;
    if (p.cfg.device == device_kind::cuda)
        device_world = comm::make_world(p.cfg.comm, comm::memory_space::device);
    const std::unique_ptr<kernels::executor> dev = kernels::make_executor(p.cfg.device);
    std::unique_ptr<results_writer> writer;
    std::unique_ptr<live_table> table;
    if (world.rank() == 0) {
        writer = open_writer(p, md, guard);
        std::vector<const scheduled_case*> running;
        for (const std::size_t i : todo)
            running.push_back(&p.cases[i]);
        table = std::make_unique<live_table>(running, world.size(), isatty(2) != 0, gpu);
        std::printf("# ringscale %s: %d ranks on %zu host(s), %d thread(s) per rank, device %s%s, "
                    "comm %s\n",
                    tool_version(), world.size(), md.hosts.size(), p.threads,
                    to_string(p.cfg.device), gpu.bound ? (" (" + gpu.gpu.name + ")").c_str() : "",
                    to_string(p.cfg.comm));
    }
    comm::communicator& job_world = device_world ? *device_world : world;
    jobs::run_context ctx{job_world, world, *dev,       p.launch,
                          p.threads, true,  p.cfg.seed, p.cfg.warmup};
    launch_monitor monitor(ctx, p.cfg, gpu.bound ? gpu.gpu.pci_bus_id : "", gpu.ranks_sharing);
    if (const std::string why = gpu_state_note(monitor.machine()); !why.empty() && writer)
        std::fprintf(stderr,
                     "ringscale: note: GPU clocks, throttling and other processes are "
                     "not recorded: %s\n",
                     why.c_str());
    int failed = 0, contended = 0;
    std::string drift;
    try {
        for (std::size_t n = 0; n < todo.size(); ++n) {
            const std::size_t i = todo[n];
            guard.set_case(static_cast<int>(i));
            monitor.before_case(static_cast<int>(n), writer.get());
            if (table)
                table->begin_case(static_cast<int>(n), p.cases[i]);
            case_record rec = run_case(p.cases[i], p.cfg, ctx, &monitor.machine());
            monitor.after_case();
            rec.case_key = p.keys[i];
            failed += rec.status() == schema::status::failed;
            contended += rec.number(schema::attr::contended).value_or(0) == 1;
            if (writer) {
                writer->append(static_cast<int>(n), rec);
                table->end_case(static_cast<int>(n), p.cases[i], rec);
            }
        }
        drift = monitor.finish(static_cast<int>(todo.size()), writer.get());
    } catch (...) {
        guard.set_before_abort({});
        if (writer) // keep what completed: a readable file marked incomplete
            try {
                writer->finish(false);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "ringscale: rank 0: %s\n", terminal_text(e.what()).c_str());
            }
        throw;
    }
    guard.set_case(-1);
    guard.set_before_abort({});
    if (writer) {
        table->finish();
        std::fputs(monitor.report(contended, drift).c_str(), stdout);
        writer->finish(true);
        if (failed)
            std::printf("# %d case(s) failed\n", failed);
        // One line whatever the path holds (a newline, terminal escapes): scripts read it.
        std::printf("results: %s\n", terminal_text(writer->final_path()).c_str());
        std::fflush(stdout);
    }
    return failed ? 1 : 0;
}

} // namespace

int run_launcher(int argc, char** argv) {
    install_early_stop(); // a stop signal before the guard: one line and exit 4, not 143
    set_crash_stage(launch_stage::mpi_init);
    MPI_Init(&argc, &argv);
    set_crash_stage(launch_stage::running);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    set_error_rank(rank);
    set_early_stop_rank(rank);
    int code = 0;
    try {
        auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
        std::string message, error_text;
        auto p = parse(argc, argv, *world, message, error_text);
        if (any_error(*world, error_text)) {
            code = 2;
        } else if (!p) {
            if (rank == 0)
                std::fputs(message.c_str(), stdout);
        } else if (any_error(*world, check_consensus(*world, p->cfg))) {
            code = 2;
        } else {
            const device_binding gpu = bind_devices(*world, p->cfg, error_text);
            if (any_error(*world, error_text) || any_error(*world, plan(*p, *world, gpu))) {
                code = 2;
            } else {
                launch_guard guard(rank, p->cfg.timeout_s);
                if (p->cfg.dry_run) {
                    if (rank == 0)
                        print_plan(p->cases);
                } else {
                    code = run_all(*p, *world, gpu, guard);
                }
            }
        }
    } catch (const config_error& e) {
        uninstall_early_stop();
        std::fprintf(stderr, "ringscale: error: %s\n", terminal_text(e.what()).c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
    } catch (const std::exception& e) {
        uninstall_early_stop();
        std::fprintf(stderr, "ringscale: rank %d: %s\n", rank, terminal_text(e.what()).c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    uninstall_early_stop(); // the outcome is decided: a SIGTERM now only ends this rank
    MPI_Finalize();
    return code;
}

} // namespace ringscale
