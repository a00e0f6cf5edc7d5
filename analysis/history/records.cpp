#include "records.hpp"

#include "analysis/cases/case_decision.hpp"
#include "analysis/cases/cases.hpp"
#include "analysis/statistics/descriptive.hpp"
#include "src/base/results_schema.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <limits>

namespace ringscale::analysis::history {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// Per measured row of `c`: the mean over ranks of `values` ([rows x world]).
void row_means(const case_data& c, const std::vector<double>& values, std::vector<double>& out) {
    for (const std::size_t r : c.measured_rows()) {
        double sum = 0;
        for (std::size_t k = 0; k < c.world; ++k)
            sum += values[r * c.world + k];
        out.push_back(sum / static_cast<double>(c.world));
    }
}

/// The phases of the pooled repeats `group`, as medians over their measured rows.
void phases(const std::vector<const case_data*>& group, launch_case& s) {
    std::vector<double> step, compute, comm, mean_time, compute_cpu;
    bool have_phases = true, have_cpu = true;
    for (const case_data* c : group) {
        const auto cpu = c->cpu.find(schema::ds_compute_cpu_s);
        have_cpu = have_cpu && cpu != c->cpu.end() && cpu->second.size() == c->time_s.size();
        if (have_cpu)
            row_means(*c, cpu->second, compute_cpu);
        step.insert(step.end(), c->step_s.begin(), c->step_s.end());
        row_means(*c, c->time_s, mean_time);
        have_phases = have_phases && !c->compute_s.empty() && !c->comm_wait_s.empty();
        if (have_phases) {
            row_means(*c, c->compute_s, compute);
            row_means(*c, c->comm_wait_s, comm);
        }
    }
    s.iterations = static_cast<std::int64_t>(step.size());
    s.step_s = median(step);
    s.compute_s = have_phases ? median(compute) : nan;
    // NaN counts of an unmeasured rank make the row's mean NaN: such rows are left out.
    compute_cpu.erase(std::remove_if(compute_cpu.begin(), compute_cpu.end(),
                                     [](double v) { return std::isnan(v); }),
                      compute_cpu.end());
    s.compute_cpu_s = have_cpu && !compute_cpu.empty() ? median(compute_cpu) : nan;
    s.comm_s = have_phases ? median(comm) : nan;
    std::vector<double> wait(step.size());
    for (std::size_t i = 0; i < step.size() && i < mean_time.size(); ++i)
        wait[i] = std::max(0.0, step[i] - mean_time[i]);
    s.wait_s = step.size() == mean_time.size() ? median(wait) : nan;
}

double peak_memory(const std::vector<const case_data*>& group) {
    double peak = nan;
    for (const char* name : {schema::ds_peak_device_bytes, schema::ds_peak_host_bytes}) {
        for (const case_data* c : group)
            if (const auto m = c->max_memory(name); m && *m > 0)
                peak = std::isnan(peak) ? *m : std::max(peak, *m);
        if (!std::isnan(peak))
            return peak;
    }
    return peak;
}

} // namespace

std::string mark_effect_suffix(const case_data& c) {
    std::vector<machine::mark_effect> effects;
    for (const machine::mark_effect& e : launch_effects(c))
        if (e.reason.rfind("oversubscribed", 0) != 0)
            effects.push_back(e);
    if (effects.empty())
        return " [effect x1]";
    const double hi = machine::largest_effect(effects, compute_share(c));
    return std::isfinite(hi) ? fmt::format(" [effect x{:.3f}]", hi) : " [effect unbounded]";
}

double mark_effect_of(const std::string& machine) {
    const auto at = machine.rfind(" [effect ");
    if (at == std::string::npos || machine.back() != ']')
        return std::numeric_limits<double>::infinity(); // older index rows: a mark always was
    const std::string v = machine.substr(at + 9, machine.size() - at - 10);
    if (v.size() < 2 || v[0] != 'x')
        return std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double x = std::strtod(v.c_str() + 1, &end);
    return end && *end == 0 && x >= 1 ? x : std::numeric_limits<double>::infinity();
}

std::string mark_text_of(const std::string& machine) {
    const auto at = machine.rfind(" [effect ");
    return at == std::string::npos ? machine : machine.substr(0, at);
}

std::map<std::string, std::string> launch_record::labels() const {
    std::map<std::string, std::string> out;
    const std::string prefix = schema::meta_attr::label_prefix;
    for (const auto& [k, v] : meta)
        if (k.compare(0, prefix.size(), prefix) == 0 && k.size() > prefix.size())
            out[k.substr(prefix.size())] = v;
    return out;
}

launch_record describe_launch(const file_info& info) {
    launch_record l;
    l.launch = info.launch;
    l.path = info.path;
    l.created_utc = info.created_utc;
    l.git_commit = info.git_commit;
    l.complete = info.complete;
    for (const auto& [k, v] : info.meta)
        l.meta[k] = v.text;
    const auto date = info.meta.find(schema::meta_attr::launchdate);
    if (date != info.meta.end() && date->second.is_integer && date->second.number) {
        // Past int64 (or not finite) is no date: the least time, named by date_problem.
        const double t = *date->second.number;
        l.time_s = std::isfinite(t) && std::fabs(t) < 9e18
                       ? static_cast<std::int64_t>(t)
                       : std::numeric_limits<std::int64_t>::min();
    } else {
        l.time_s = parse_utc(info.created_utc).value_or(std::numeric_limits<std::int64_t>::min());
    }
    return l;
}

std::vector<launch_case> summarize_launch(const std::vector<case_data>& cases) {
    std::map<std::string, std::vector<const case_data*>> by_key;
    for (const case_data& c : cases)
        if (c.ok() && !c.step_s.empty())
            by_key[case_key(c)].push_back(&c);
    std::vector<launch_case> out;
    for (const auto& [key, group] : by_key) {
        launch_case s;
        s.launch = group.front()->file ? group.front()->file->launch : "";
        s.key = key;
        s.label = case_label(*group.front(), true);
        phases(group, s);
        s.memory_bytes = peak_memory(group);
        // case_data::mark(), as compare and predict judge it: contended (the outcome, or
        // the machine fields judged again) or drifted (the launch's sentinel). The outcome's
        // reason is the file's text: escaped and cut, as the index keeps only printable rows.
        // Issue 49: with the largest estimated effect of its marks on the whole time (the
        // decision rule weighs it; an oversubscription is the launch's own configuration, a
        // change history explains rather than excuses, so it is left out of the figure).
        for (const case_data* c : group)
            if (s.machine.empty() && !c->mark().empty())
                s.machine = terminal_text(c->mark()).substr(0, 300) + mark_effect_suffix(*c);
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<std::int64_t> parse_utc(const std::string& text) {
    std::tm tm{};
    char z = 0;
    int consumed = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &tm.tm_year, &tm.tm_mon,
                    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z, &consumed) != 7 ||
        z != 'Z' || static_cast<std::size_t>(consumed) != text.size() || tm.tm_mon < 1 ||
        tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return std::nullopt;
    const std::tm asked = tm;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const std::time_t t = timegm(&tm);
    // timegm moves Feb 31 to Mar 3: a date that does not come back as written is none.
    std::tm back{};
    if (!gmtime_r(&t, &back) || back.tm_year + 1900 != asked.tm_year ||
        back.tm_mon + 1 != asked.tm_mon || back.tm_mday != asked.tm_mday)
        return std::nullopt;
    return static_cast<std::int64_t>(t);
}

std::string date_problem(const launch_record& l) {
    if (l.time_s == std::numeric_limits<std::int64_t>::min()) {
        const auto it = l.meta.find(schema::meta_attr::launchdate);
        return fmt::format("its date is not a calendar date (/meta {} '{}', created_utc '{}')",
                           schema::meta_attr::launchdate,
                           it == l.meta.end() ? "" : terminal_text(it->second.substr(0, 40)),
                           terminal_text(l.created_utc.substr(0, 64)));
    }
    if (l.time_s < earliest_launch_s)
        return fmt::format("it is dated before 2000-01-01 ({} UTC)", format_utc(l.time_s));
    return "";
}

std::string format_utc(std::int64_t t) {
    const std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    if (!gmtime_r(&tt, &tm))
        return "?";
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

} // namespace ringscale::analysis::history
