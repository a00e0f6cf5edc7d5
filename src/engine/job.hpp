// The job interface: what the launcher needs from collectives, ring attention, context
// parallel and training steps. A job declares its options, plans its cases from the sweep's
// typed points (pure, no communication), runs each case through a case_runner the run loop
// drives, and reports each case as metrics (typed values with units); it never presents.
#pragma once

#include "comm/communicator.hpp"
#include "comm/topology.hpp"
#include "kernels/executor.hpp"
#include "src/base/backend.hpp"
#include "src/base/case_record.hpp"
#include "src/base/clock.hpp"
#include "src/engine/config.hpp"
#include "src/engine/metric.hpp"
#include "src/engine/options.hpp"
#include "src/engine/params.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// What the launch knows before any case runs.
struct launch_info {
    int world_size = 1;
    device_kind device = device_kind::cpu;
    comm_kind comm = comm_kind::mpi;
    std::uint64_t host_bytes_per_rank = 0; ///< memory a rank may use (preflight budget)
    /// --device cuda: device memory a rank may use (its GPU's free memory over the ranks
    /// sharing it, less a reserve); a case estimated above it is skipped.
    std::uint64_t device_bytes_per_rank = 0;
    /// --device cuda: the bound GPU's compute capability (0.0: not known).
    int gpu_cc_major = 0, gpu_cc_minor = 0;
    /// The node of every rank (comm/topology.hpp); empty: every rank on one node.
    comm::node_layout nodes;
    accuracy_mode accuracy = accuracy_mode::automatic; ///< --accuracy
    std::int64_t accuracy_sample = 64;                 ///< --accuracy-sample: rows per head
    int iterations = 1; ///< warm-up plus timed iterations of every case
};

/// One planned case: its parameters and what preflight needs to know.
struct case_plan {
    std::string job;
    std::string variant;              ///< e.g. "allreduce", "zigzag", "ddp"
    params values;                    ///< the case's resolved parameters
    std::uint64_t bytes_per_rank = 0; ///< estimated peak host (or device) bytes per rank
    bool skippable = false;           ///< from a preset sweep: record as skipped instead of failing
    std::string skip_reason;          ///< non-empty: skip this case (recorded, sweep goes on)
    bool validate_by_default = true;  ///< what --validate auto means for this case
    /// Measure the case's accuracy against fp64 after its iterations (case_runner::accuracy;
    /// the attention jobs: what --accuracy resolved to), and show it in the live table.
    bool measure_accuracy = false;
    bool show_accuracy = false;
    std::string note; ///< one line the launcher prints once per launch (a group spans nodes)
};

/// What the run loop hands a case.
struct run_context {
    /// The job's communicator for its own buffers: host MPI on the CPU; NCCL or MPI staged
    /// through pinned host memory for device buffers with --device cuda.
    comm::communicator& world;
    /// Host-memory MPI over the same ranks, for host scalars and validation gathers (the
    /// same object as `world` on the CPU).
    comm::communicator& control;
    /// Where the job computes and allocates (kernels/executor.hpp).
    kernels::executor& dev;
    launch_info launch;
    int threads_per_rank = 1;
    bool validate = true; ///< resolved from --validate for this case
    std::uint64_t seed = 1;
    int warmup = 0; ///< warm-up iterations the run loop runs before the timed ones
};

/// The result of comparing a distributed result with the single-rank reference.
struct validation {
    bool checked = false;
    bool ok = true;
    double max_abs_err = 0;
    double tolerance = 0;
    std::uint64_t wrong = 0; ///< elements outside tolerance (exact jobs: any difference)
    std::string detail;      ///< why it failed, one line
};

/// Per-case extras beyond the fixed schema. Keys must be the same on every rank.
struct case_extras {
    std::map<std::string, std::vector<double>> per_iteration; ///< [iterations], rank 0's
    std::map<std::string, double> per_rank;                   ///< gathered into [world]
    attr_map attrs;                                           ///< extra case attributes
    /// Per-step series of train_step --numerics ([steps] each, rank 0's; the case's
    /// `numerics` group).
    std::map<std::string, std::vector<double>> numerics;
};

/// Runs one case: created by job::make_case, driven by the run loop (setup, warm-up and
/// timed iterations, validation). Every method is collective over the world.
class case_runner {
  public:
    virtual ~case_runner() = default;
    /// Attributes describing the case: job parameters (typed), dtype, scaling, layout...
    /// plus flops_per_iter and comm_bytes_per_iter (schema::attr) as doubles.
    virtual attr_map describe() const = 0;
    /// Allocate (through host_buffer) and fill seeded inputs. Must not communicate, so an
    /// error here is raised on every rank alike and recorded as a failed case.
    virtual void setup() = 0;
    /// Run one iteration, timing its phases in `timer` (compute, comm_wait).
    virtual void iterate(phase_timer& timer) = 0;
    /// Untimed, before each iteration's barrier: restore what earlier iterations consumed
    /// (an in-place collective's input). Must not communicate.
    virtual void before_iteration() {}
    /// Check the last iteration's result against the single-rank reference.
    virtual validation validate() = 0;
    /// Measure the last iteration's result against fp64 (only where the plan says
    /// measure_accuracy): the outcome attributes, the same on every rank.
    virtual attr_map accuracy() { return {}; }
    /// Extra datasets and attributes (loss, memory breakdown ...).
    virtual case_extras extras() const { return {}; }
};

/// A job: a table of functions in the spirit of nccl-tests' per-operation files.
class job {
  public:
    virtual ~job() = default;
    virtual std::string name() const = 0;
    /// One line for --help.
    virtual std::string summary() const = 0;
    /// The job's own options, each declared once (common ones such as --iters belong to
    /// the launcher). The order is the sweep's: the first option varies slowest.
    virtual std::vector<option_decl> options() const = 0;
    /// The cases of the sweep's points (expand_sweep in sweep.hpp: typed values of this
    /// job's options, each checked against its declaration). The job applies its own rules
    /// (divisibility, options that exclude each other, the memory estimate) and chooses
    /// which values make each case's identity. Pure; throws config_error on bad input.
    virtual std::vector<case_plan> plan(const std::vector<params>& sweep,
                                        const launch_info& launch) const = 0;
    /// Build a case to run; nothing is allocated until setup().
    virtual std::unique_ptr<case_runner> make_case(const case_plan& plan,
                                                   run_context& ctx) const = 0;
    /// What people read about a case: typed values with units and rendering hints, the same
    /// metrics in the same order for every case of the job; reporters (the live table)
    /// present them. `rec` is the case's record: a skipped or failed case has no timings and
    /// may lack what describe() adds; to size its columns the live table also asks with a
    /// record that holds nothing but `world`. What `rec` does not tell is NaN. Pure.
    virtual std::vector<metric> metrics(const case_plan& plan,
                                        const results::case_record& rec) const = 0;
};

} // namespace ringscale::jobs
