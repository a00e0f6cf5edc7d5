#include "src/launcher/live_table.hpp"

#include "src/base/clock.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/text_escape.hpp"
#include "src/launcher/scheme_table.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ringscale {

namespace {

using jobs::metric_hint;

std::string clock_text(double s) {
    const long t = static_cast<long>(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02d}:{:02d}", t / 3600, (t / 60) % 60, t % 60)
                     : fmt::format("{}:{:02d}", t / 60, t % 60);
}

std::string status_cell(const case_record& rec) {
    const std::string status = rec.status();
    if (status == schema::status::skipped)
        return "skipped";
    if (status == schema::status::failed)
        return "FAILED";
    return rec.number(schema::attr::validated).value_or(0) != 0 ? "ok" : "-";
}

/// Room a cell of `hint` needs when the plan cannot tell its value yet.
int default_width(metric_hint hint) {
    switch (hint) {
    case metric_hint::text:
        return 8;
    case metric_hint::count:
    case metric_hint::bytes:
        return 10;
    case metric_hint::size:
    case metric_hint::number:
        return 7;
    case metric_hint::rate:
    case metric_hint::time:
    case metric_hint::error:
        break;
    }
    return 9;
}

bool known(const jobs::metric& m) {
    return m.hint == metric_hint::text ? !m.text.empty() : !std::isnan(m.value);
}

/// A case's record with what the closing comparison needs (attributes, step and wait times,
/// peak memory), without the per-rank extras and per-iteration series.
case_record kept_for_comparison(const case_record& rec) {
    case_record kept = rec;
    kept.compute_s.clear();
    kept.per_iteration.clear();
    kept.per_rank.clear();
    kept.affinity_list.clear();
    return kept;
}

/// comm% as ringscale-stats summary computes it: sum of comm_wait_s over sum of time_s, over
/// every rank and measured iteration (the slowest rank alone waits least and would show ~0).
double comm_share_percent(const case_record& rec) {
    double wait = 0, total = 0;
    const std::size_t n = std::min(rec.comm_wait_s.size(), rec.time_s.size());
    for (std::size_t r = 0; r < static_cast<std::size_t>(rec.rows); ++r) {
        if (r < rec.is_warmup.size() && rec.is_warmup[r])
            continue;
        for (std::size_t k = 0; k < static_cast<std::size_t>(rec.world); ++k) {
            const std::size_t i = r * static_cast<std::size_t>(rec.world) + k;
            if (i < n) {
                wait += rec.comm_wait_s[i];
                total += rec.time_s[i];
            }
        }
    }
    return total > 0 ? 100.0 * wait / total : 0;
}

} // namespace

std::string metric_cell(const jobs::metric& m) {
    if (m.hint == metric_hint::text)
        return m.text.empty() ? "-" : m.text;
    if (std::isnan(m.value))
        return "-";
    switch (m.hint) {
    case metric_hint::count:
        return fmt::format("{:.0f}", m.value);
    case metric_hint::size:
        return m.value < 0 ? fmt::format("{:.0f}", m.value)
                           : format_size(static_cast<std::uint64_t>(m.value));
    case metric_hint::rate:
        return std::fabs(m.value) >= 1e4 ? fmt::format("{:.0f}", m.value)
                                         : fmt::format("{:.4g}", m.value);
    case metric_hint::bytes:
        return format_bytes(m.value);
    case metric_hint::time:
        return format_seconds(m.value);
    case metric_hint::error:
        return fmt::format("{:.1e}", m.value);
    case metric_hint::number:
    case metric_hint::text:
        break;
    }
    return fmt::format("{:.4g}", m.value);
}

std::string metric_header(const jobs::metric& m) {
    const bool unit_in_cell = m.hint == metric_hint::bytes || m.hint == metric_hint::time;
    if (m.unit.empty() || unit_in_cell)
        return m.name;
    return m.name.empty() ? m.unit : fmt::format("{}({})", m.name, m.unit);
}

std::vector<table_column> job_columns(const jobs::job& job,
                                      const std::vector<const scheduled_case*>& cases, int world) {
    case_record nothing_yet; // what the table knows before a case runs: its plan and P
    nothing_yet.world = world;
    std::vector<table_column> columns;
    for (const scheduled_case* sc : cases) {
        const std::vector<jobs::metric> row = job.metrics(sc->plan, nothing_yet);
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i == columns.size())
                columns.push_back({metric_header(row[i]), 4});
            table_column& col = columns[i];
            const int need = known(row[i]) ? static_cast<int>(metric_cell(row[i]).size())
                                           : default_width(row[i].hint);
            col.width = std::max({col.width, static_cast<int>(col.header.size()), need});
        }
    }
    // The header line starts with '#', which takes the first column's first character: keep
    // one space there so no title loses its first letter.
    if (!columns.empty())
        columns.front().width =
            std::max(columns.front().width, static_cast<int>(columns.front().header.size()) + 1);
    return columns;
}

namespace {

/// Seconds a case of weight w takes, fitted as fixed + per_weight * w (both >= 0, least
/// squares) over the finished cases' (weight, seconds): a case's own cost estimate. One
/// finished size cannot tell the fixed part (setup, warm-up, barriers, validation) from the
/// part that grows with the case: each case then costs what the finished ones did on average.
struct cost_fit {
    double n = 0, w = 0, t = 0, ww = 0, wt = 0;
    void add(double weight, double seconds) {
        n += 1;
        w += weight;
        t += seconds;
        ww += weight * weight;
        wt += weight * seconds;
    }
    double at(double weight) const {
        if (n == 0)
            return 0;
        const double var = ww - w * w / n;
        if (!(var > 1e-12 * ww)) // one size
            return t / n;
        const double per_weight = (wt - w * t / n) / var;
        const double fixed = (t - per_weight * w) / n;
        if (per_weight <= 0)
            return t / n;
        if (fixed < 0)
            return weight * wt / ww; // proportional
        return fixed + per_weight * weight;
    }
};

} // namespace

double estimate_left_s(const std::vector<eta_case>& cases, const std::vector<double>& durations_s) {
    const std::size_t done = std::min(durations_s.size(), cases.size());
    std::map<int, cost_fit> per_job; // job -> its finished cases
    cost_fit all;
    for (std::size_t i = 0; i < done; ++i) {
        per_job[cases[i].job].add(cases[i].weight, durations_s[i]);
        all.add(cases[i].weight, durations_s[i]);
    }
    double left = 0;
    for (std::size_t i = done; i < cases.size(); ++i) {
        const eta_case& c = cases[i];
        if (c.same_as >= 0 && static_cast<std::size_t>(c.same_as) < done) {
            left += durations_s[static_cast<std::size_t>(c.same_as)];
            continue;
        }
        const auto it = per_job.find(c.job);
        left += (it != per_job.end() ? it->second : all).at(c.weight);
    }
    return left;
}

live_table::live_table(const std::vector<const scheduled_case*>& cases, int world,
                       bool stderr_is_tty, const device_binding& gpu)
    : m_total(static_cast<int>(cases.size())), m_tty(stderr_is_tty), m_start_s(now_s()),
      m_kernel(gpu.attn_kernel), m_kernel_note(gpu.attn_kernel_note) {
    std::map<const jobs::job*, std::vector<const scheduled_case*>> by_job;
    std::map<const jobs::job*, int> job_ids;
    std::map<std::pair<const jobs::job*, std::string>, int> first_copy; // repetitions
    for (const scheduled_case* sc : cases) {
        by_job[sc->job].push_back(sc);
        const int job = job_ids.emplace(sc->job, static_cast<int>(job_ids.size())).first->second;
        std::string text = sc->plan.variant; // the case without its repetition
        for (const auto& [name, value] : sc->plan.values.values())
            text += "|" + name + "=" + value.text;
        const auto key = std::make_pair(sc->job, text);
        const auto [it, first] = first_copy.emplace(key, static_cast<int>(m_eta.size()));
        m_eta.push_back({job, std::max(1.0, static_cast<double>(sc->plan.bytes_per_rank)),
                         first ? -1 : it->second});
    }
    for (const auto& [job, its] : by_job)
        m_columns[job] = job_columns(*job, its, world);
}

std::string live_table::progress_text(int done) const {
    const double elapsed = now_s() - m_start_s;
    const std::string eta =
        done > 0 ? clock_text(estimate_left_s(m_eta, m_durations_s)) : std::string("?");
    return fmt::format("case {}/{}, elapsed {}, ETA {}", done, m_total, clock_text(elapsed), eta);
}

void live_table::begin_case(int index, const scheduled_case& sc) {
    m_case_start_s = now_s();
    std::fputs(m_notes.line(m_kernel, m_kernel_note).c_str(), stdout); // once: the launch's
    if (m_tty)
        std::fprintf(stderr, "\r\033[K[%s] running %s", progress_text(index).c_str(),
                     terminal_text(sc.plan.job + " " + sc.plan.variant).c_str());
}

void live_table::print_header(const jobs::job& j) {
    std::string names;
    for (const table_column& col : m_columns[&j])
        names += fmt::format("{:>{}} ", col.header, col.width);
    names += fmt::format("{:>10} {:>6} {:>8}", "time", "comm%", "check");
    std::printf("#\n# job %s\n#%s\n", j.name().c_str(), names.c_str() + 1);
}

void live_table::end_case(int index, const scheduled_case& sc, const case_record& rec) {
    if (m_durations_s.size() == static_cast<std::size_t>(index))
        m_durations_s.push_back(now_s() - m_case_start_s);
    if (m_tty)
        std::fprintf(stderr, "\r\033[K");
    std::fputs(
        m_notes.line(rec.text(schema::attr::attn_kernel), rec.text(schema::attr::attn_kernel_note))
            .c_str(),
        stdout);
    if (sc.job != m_last_job) {
        print_header(*sc.job);
        m_last_job = sc.job;
    }
    const std::vector<table_column>& columns = m_columns[sc.job];
    const std::vector<jobs::metric> row = sc.job->metrics(sc.plan, rec);
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
        line +=
            fmt::format("{:>{}} ", metric_cell(row[i]), i < columns.size() ? columns[i].width : 4);
    const bool ran = rec.rows > 0;
    const double t = rec.median_step_s();
    const double share = comm_share_percent(rec);
    line += fmt::format("{:>10} {:>6} {:>8}", ran ? format_seconds(t) : "-",
                        ran ? fmt::format("{:.0f}", share) : "-", status_cell(rec));
    std::printf(" %s\n", terminal_text(line).c_str()); // specs (--docs) are the user's text
    const std::string error = rec.text(schema::attr::error);
    if (!error.empty())
        std::printf("#   case %d: %s\n", index, terminal_text(error).c_str());
    std::fflush(stdout);
    if (!m_tty)
        std::fprintf(stderr, "[%s]\n", progress_text(index + 1).c_str());
    if (compares_schemes(rec))
        m_ran.push_back(kept_for_comparison(rec));
}

void live_table::finish() {
    if (m_tty)
        std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    std::fputs(scheme_table(m_ran).c_str(), stdout);
    std::fflush(stdout);
}

} // namespace ringscale
