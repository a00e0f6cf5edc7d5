#include "profile.hpp"

#include "analysis/presentation/views.hpp"

#include "src/base/backend.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

namespace ringscale::analysis {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty())
            out.push_back(item);
    return out;
}

} // namespace

std::vector<profile_op> profile_ops(const case_data& c) {
    const auto steps = c.number(schema::attr::profile_steps);
    const auto step_total = c.number(schema::attr::profile_step_s);
    const std::vector<std::string> names = split_commas(c.text(schema::attr::profile_ops));
    if (!steps || !step_total || *steps < 1 || !(*step_total > 0) || names.empty())
        return {};
    const double step_s = *step_total / *steps;
    std::vector<profile_op> out;
    double timed = 0;
    for (const std::string& name : names) {
        profile_op op;
        op.name = name;
        op.per_step_s = c.number(schema::attr::profile_prefix + name + "_s").value_or(0.0) / *steps;
        op.calls_per_step =
            c.number(schema::attr::profile_prefix + name + "_calls").value_or(0.0) / *steps;
        op.share = op.per_step_s / step_s;
        timed += op.per_step_s;
        out.push_back(op);
    }
    profile_op other;
    other.name = "other";
    other.per_step_s = std::max(0.0, step_s - timed);
    other.share = other.per_step_s / step_s;
    out.push_back(other);
    return out;
}

table profile_table(const std::vector<case_data>& cases) {
    table t;
    t.add_column("case", "case");
    t.add_column("op", "op");
    t.add_column("time/step", "time_per_step_s");
    t.add_column("% of step", "share_pct");
    t.add_column("calls/step", "calls_per_step");
    for (const case_data& c : cases) {
        const std::vector<profile_op> ops = profile_ops(c);
        if (ops.empty())
            continue;
        if (t.caption.empty())
            t.caption = fmt::format(
                "profiled on rank {} ({}), per timed step", c.text(schema::attr::profile_rank, "0"),
                find_device_kind(c.text(schema::attr::device)) == device_kind::cuda
                    ? "CUDA events on the compute stream"
                    : "host clock");
        // Short on purpose: a profiled case carries ~70 profile_* attributes.
        const std::string label =
            fmt::format("{}/{} P={} #{}", c.job, c.variant, c.world_size, c.group);
        for (const profile_op& op : ops)
            t.rows.push_back(
                {text_cell(label), text_cell(op.name),
                 number_cell(op.per_step_s, format_time(op.per_step_s)),
                 number_cell(100 * op.share, fmt::format("{:.1f}", 100 * op.share)),
                 number_cell(op.calls_per_step, fmt::format("{:g}", op.calls_per_step))});
    }
    return t;
}

} // namespace ringscale::analysis
