// What rank 0 prints while a launch runs: a table row per case on stdout (nccl-tests style,
// a header whenever the job changes) and progress on stderr (a live line on a terminal, one
// line per case in a batch log). One table renders every job: each job reports its cases as
// metrics (src/engine/metric.hpp), the table chooses the columns' widths and the cells'
// text from their hints. The launch closes with the comparison of attention schemes
// (scheme_table.hpp).
#pragma once

#include "src/engine/device_binding.hpp"
#include "src/engine/run_loop.hpp"
#include "src/launcher/attn_note.hpp"

#include <map>
#include <string>
#include <vector>

namespace ringscale {

/// One column of a job's table.
struct table_column {
    std::string header;
    int width = 4;
};

/// The text of a metric's cell: its text, or its value rendered by its hint ("-" when NaN).
std::string metric_cell(const jobs::metric& m);

/// A metric's column header: its name, with its unit in parentheses ("busbw(GB/s)"), or the
/// unit alone ("tok/s"); bytes and times show their unit in the cell instead.
std::string metric_header(const jobs::metric& m);

/// The columns of `job`'s table: a header per metric, each wide enough for its header, for
/// what its hint needs, and for every cell the plans of `cases` (this job's) already tell.
std::vector<table_column> job_columns(const jobs::job& job,
                                      const std::vector<const scheduled_case*>& cases, int world);

/// What the ETA knows of a case before it runs.
struct eta_case {
    int job = 0;       ///< which job (cases of a job share one cost fit)
    double weight = 1; ///< relative cost within its job: the plan's bytes per rank
    int same_as = -1;  ///< an earlier repetition of the same case, or -1
};

/// Seconds the cases after the first `durations_s.size()` (which took those seconds) will
/// take: an earlier repetition's measured time where there is one, else the case's own
/// estimate from its weight: a fixed part plus a part per unit of weight, both fitted to its
/// job's finished cases (the launch's, before any case of the job finished). Until cases of
/// two sizes finished, each case costs their mean: a case's time is not proportional to its
/// weight (a small first case carries the fixed costs). Pure.
double estimate_left_s(const std::vector<eta_case>& cases, const std::vector<double>& durations_s);

class live_table {
  public:
    /// `cases` will run on `world` ranks, in this order; progress is redrawn in place when
    /// stderr is a terminal. `gpu`: the launch's attention kernel and why (attn_note.hpp).
    live_table(const std::vector<const scheduled_case*>& cases, int world, bool stderr_is_tty,
               const device_binding& gpu = {});
    /// Progress: case `index` (0-based) is starting (before the first, the launch's attention
    /// kernel line, on --device cuda).
    void begin_case(int index, const scheduled_case& sc);
    /// Print the finished case's row (before it, the case's attention kernel line when that
    /// kernel and reason are new to the launch: a masked case on the sm80 kernels).
    void end_case(int index, const scheduled_case& sc, const case_record& rec);
    /// Clear the progress line and print the closing comparison of attention schemes over
    /// every case that ran (nothing when no context_parallel case ran).
    void finish();

  private:
    void print_header(const jobs::job& j);
    std::string progress_text(int done) const;

    int m_total;
    bool m_tty;
    double m_start_s;
    double m_case_start_s = 0;
    std::vector<eta_case> m_eta;       ///< every case, in run order
    std::vector<double> m_durations_s; ///< of the cases finished so far
    const jobs::job* m_last_job = nullptr;
    std::map<const jobs::job*, std::vector<table_column>> m_columns;
    std::vector<case_record> m_ran;      ///< finished attention cases, for the closing comparison
    std::string m_kernel, m_kernel_note; ///< the launch's attention kernel ("" on the CPU)
    attn_kernel_notes m_notes;           ///< each kernel and reason shown once
};

} // namespace ringscale
