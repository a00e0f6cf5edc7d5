#include "src/launcher/live_table.hpp"

#include "src/base/clock.hpp"
#include "src/base/parse.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale {

namespace {

std::string clock_text(double s) {
    const long t = static_cast<long>(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02d}:{:02d}", t / 3600, (t / 60) % 60, t % 60)
                     : fmt::format("{}:{:02d}", t / 60, t % 60);
}

std::string status_cell(const case_record& rec, const jobs::validation& v) {
    const std::string status = rec.outcome_text("status");
    if (status == "skipped")
        return "skipped";
    if (status == "failed")
        return "FAILED";
    return v.checked ? "ok" : "-";
}

} // namespace

live_table::live_table(int total, bool stderr_is_tty)
    : m_total(total), m_tty(stderr_is_tty), m_start_s(now_s()) {}

std::string live_table::progress_text(int done) const {
    const double elapsed = now_s() - m_start_s;
    const std::string eta =
        done > 0 ? clock_text(elapsed / done * (m_total - done)) : std::string("?");
    return fmt::format("case {}/{}, elapsed {}, ETA {}", done, m_total, clock_text(elapsed), eta);
}

void live_table::begin_case(int index, const planned_case& pc) {
    if (m_tty)
        std::fprintf(stderr, "\r\033[K[%s] running %s %s", progress_text(index).c_str(),
                     pc.plan.job.c_str(), pc.plan.variant.c_str());
}

void live_table::print_header(const jobs::job& j) {
    std::string names, rule;
    for (const auto& col : j.columns())
        names += fmt::format("{:>{}} ", col.header, col.width);
    names += fmt::format("{:>10} {:>6} {:>8}", "time", "comm%", "check");
    std::printf("#\n# job %s\n#%s\n", j.name().c_str(), names.c_str() + 1);
}

void live_table::end_case(int index, const planned_case& pc, const case_record& rec) {
    if (m_tty)
        std::fprintf(stderr, "\r\033[K");
    if (pc.job != m_last_job) {
        print_header(*pc.job);
        m_last_job = pc.job;
    }
    jobs::case_summary s;
    s.plan = &pc.plan;
    s.attrs = rec.flat();
    s.world_size = rec.world;
    s.median_time_s = median_of_slowest(rec, rec.time_s);
    s.median_compute_s = median_of_slowest(rec, rec.compute_s);
    s.median_comm_wait_s = median_of_slowest(rec, rec.comm_wait_s);
    s.check.checked = jobs::attr_number(s.attrs, "validated") != 0;
    s.check.max_abs_err = jobs::attr_number(s.attrs, "max_abs_err");
    s.check.wrong = static_cast<std::uint64_t>(jobs::attr_number(s.attrs, "wrong_elements"));
    for (auto bytes : rec.peak_host_bytes)
        s.peak_host_bytes = std::max<std::uint64_t>(s.peak_host_bytes, bytes);
    const bool ran = rec.rows > 0;
    std::string line;
    const auto cells = pc.job->row(s);
    const auto cols = pc.job->columns();
    for (std::size_t i = 0; i < cols.size(); ++i)
        line += fmt::format("{:>{}} ", i < cells.size() ? cells[i] : "", cols[i].width);
    const double share = s.median_time_s > 0 ? 100.0 * s.median_comm_wait_s / s.median_time_s : 0;
    line += fmt::format("{:>10} {:>6} {:>8}", ran ? format_seconds(s.median_time_s) : "-",
                        ran ? fmt::format("{:.0f}", share) : "-", status_cell(rec, s.check));
    std::printf(" %s\n", line.c_str());
    const std::string error = rec.outcome_text("error");
    if (!error.empty())
        std::printf("#   case %d: %s\n", index, error.c_str());
    std::fflush(stdout);
    if (!m_tty)
        std::fprintf(stderr, "[%s]\n", progress_text(index + 1).c_str());
    m_summary.push_back(s);
    if (std::find(m_jobs.begin(), m_jobs.end(), pc.job) == m_jobs.end())
        m_jobs.push_back(pc.job);
}

void live_table::finish() {
    if (m_tty)
        std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    for (const auto* j : m_jobs)
        std::fputs(j->closing_table(m_summary).c_str(), stdout);
    std::fflush(stdout);
}

} // namespace ringscale
