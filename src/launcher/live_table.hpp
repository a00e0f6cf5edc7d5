// What rank 0 prints while a launch runs: a table row per case on stdout (nccl-tests
// style, a header whenever the job changes) and progress on stderr (a live line on a
// terminal, one line per case in a batch log).
#pragma once

#include "src/engine/run_loop.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace ringscale {

class live_table {
  public:
    /// `total` cases will run; progress is redrawn in place when stderr is a terminal.
    live_table(int total, bool stderr_is_tty);
    /// Progress: case `index` (0-based) is starting.
    void begin_case(int index, const planned_case& pc);
    /// Print the finished case's row.
    void end_case(int index, const planned_case& pc, const case_record& rec);
    /// Clear the progress line and print each job's closing table (jobs::job::closing_table)
    /// over every case that ran.
    void finish();

  private:
    void print_header(const jobs::job& j);
    std::string progress_text(int done) const;

    int m_total;
    bool m_tty;
    double m_start_s;
    const jobs::job* m_last_job = nullptr;
    std::vector<const jobs::job*> m_jobs;      ///< jobs that ran a case, in order
    std::vector<jobs::case_summary> m_summary; ///< every finished case
};

} // namespace ringscale
