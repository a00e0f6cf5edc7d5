// The job interface: what the launcher needs from collectives, ring attention, context
// parallel and training steps. A job plans its cases from the user's parameters (pure,
// no communication), then runs each case through a job_case the run loop drives.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/device.hpp"
#include "src/base/clock.hpp"
#include "src/engine/params.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ringscale::jobs {

/// What the launch knows before any case runs.
struct launch_info {
    int world_size = 1;
    std::string device = "cpu";            ///< cpu | cuda
    std::string comm = "mpi";              ///< mpi | nccl
    std::uint64_t host_bytes_per_rank = 0; ///< memory a rank may use (preflight budget)
    /// --device cuda: device memory a rank may use (its GPU's free memory over the ranks
    /// sharing it, less a reserve); a case estimated above it is skipped.
    std::uint64_t device_bytes_per_rank = 0;
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
};

/// What the run loop hands a case.
struct run_context {
    /// The job's communicator for its own buffers: host MPI on the CPU; NCCL or MPI staged
    /// through pinned host memory for device buffers with --device cuda.
    comm::communicator& world;
    /// Host-memory MPI over the same ranks, for host scalars and validation gathers (the
    /// same object as `world` on the CPU).
    comm::communicator& control;
    /// Where the job computes and allocates (kernels/device.hpp).
    kernels::device& dev;
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
};

/// One case, created by job::make_case. Every method is collective over the world.
class job_case {
  public:
    virtual ~job_case() = default;
    /// Attributes describing the case: job parameters (typed), dtype, scaling, layout...
    /// plus "flops_per_iter" and "comm_bytes_per_iter" (per rank) as doubles.
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
    /// Extra datasets and attributes (loss, memory breakdown ...).
    virtual case_extras extras() const { return {}; }
};

/// One column of the live table.
struct table_column {
    std::string header;
    int width = 10;
};

/// What rank 0 knows about a finished case when it prints its table row.
struct case_summary {
    const case_plan* plan = nullptr;
    attr_map attrs; ///< describe() plus extras().attrs
    int world_size = 1;
    double median_time_s = 0; ///< median over timed iterations of the slowest rank
    double median_compute_s = 0;
    double median_comm_wait_s = 0;
    std::uint64_t peak_host_bytes = 0;   ///< the largest rank's tracked peak (0 when not run)
    std::uint64_t peak_device_bytes = 0; ///< the largest rank's device peak (0 on the CPU)
    validation check;
};

/// A job: a table of functions in the spirit of nccl-tests' per-operation files.
class job {
  public:
    virtual ~job() = default;
    virtual std::string name() const = 0;
    /// One line for --help.
    virtual std::string summary() const = 0;
    /// The job's own options (common ones such as --iters belong to the launcher).
    virtual std::vector<option_spec> options() const = 0;
    /// Expand the parameters into cases. Pure; throws config_error on bad input.
    virtual std::vector<case_plan> plan(const param_lists& lists,
                                        const launch_info& launch) const = 0;
    /// Build a case to run; nothing is allocated until setup().
    virtual std::unique_ptr<job_case> make_case(const case_plan& plan, run_context& ctx) const = 0;
    /// The live table's columns after the common ones, and one row's cells.
    virtual std::vector<table_column> columns() const = 0;
    virtual std::vector<std::string> row(const case_summary& s) const = 0;
    /// Rank 0, after the launch's last case: text printed after the table (a comparison
    /// across cases), given every case of the launch, this job's and others'. Empty: none.
    virtual std::string closing_table(const std::vector<case_summary>& cases) const {
        (void)cases;
        return {};
    }
};

} // namespace ringscale::jobs
