// `ringscale-stats overlap INPUT... [--case TEXT]`: per traced case (launched with --trace), how
// much of each ring step's transfer hid under compute on each rank, the exposed part, and the
// critical path of the iteration.
#include "shared.hpp"

#include "analysis/measures/overlap.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

cell ms_cell(double s) {
    return number_cell(s * 1e3, fmt::format("{:.3f}", s * 1e3));
}

// The lines people read under a case's table: its worst step and critical path.
std::string verdict_lines(const overlap_summary& s) {
    const std::string worst = worst_step_text(s);
    return fmt::format("worst step: {}\ncritical path: {}\n", worst.empty() ? "no transfer" : worst,
                       critical_path_text(s));
}

table overlap_table(const std::string& label, const traced_iteration& it,
                    const overlap_summary& s) {
    table t;
    t.caption = fmt::format("{} ({} iteration {}; length {:.3f} ms; remaining skew {:.1f} us{})",
                            label, it.reason, it.row, s.length_s * 1e3, it.skew_s * 1e6,
                            it.dropped > 0 ? fmt::format("; {} events dropped", it.dropped) : "");
    for (const auto& [title, key] :
         std::vector<std::pair<std::string, std::string>>{{"rank", "rank"},
                                                          {"step", "step"},
                                                          {"transfer ms", "transfer_ms"},
                                                          {"overlapped ms", "overlapped_ms"},
                                                          {"exposed ms", "exposed_ms"},
                                                          {"exposed %", "exposed_pct"},
                                                          {"wait ms", "wait_ms"},
                                                          {"compute ms", "compute_ms"},
                                                          {"bytes", "bytes"}})
        t.add_column(title, key);
    for (const step_overlap& o : s.steps) {
        const double pct = o.transfer_s > 0 ? 100 * o.exposed_s / o.transfer_s : 0;
        t.rows.push_back(
            {int_cell(o.rank), o.step >= 0 ? int_cell(o.step) : text_cell("-"),
             ms_cell(o.transfer_s), ms_cell(o.overlapped_s), ms_cell(o.exposed_s),
             o.transfer_s > 0 ? number_cell(pct, fmt::format("{:.0f}", pct)) : text_cell("-"),
             ms_cell(o.wait_s), ms_cell(o.compute_s),
             number_cell(o.bytes, fmt::format("{:.0f}", o.bytes))});
    }
    return t;
}

struct overlap_command final : input_command {
    const char* name() const override { return "overlap"; }
    const char* help() const override {
        return "Per traced case (--trace): each ring step's transfer, the compute it hid "
               "under, the exposed part per rank, and the iteration's critical path.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        d.add_options()("case", po::value<std::string>(&m_case),
                        "only the cases whose label (with P=) contains this text");
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto cases = traced_cases(rs.cases, m_case);
        if (cases.empty())
            throw config_error(m_case.empty() ? "no case has a trace (launch with --trace 1)"
                                              : "no traced case matches --case");
        const bool people =
            m_common.format == output_format::text || m_common.format == output_format::md;
        std::vector<std::pair<std::string, table>> tables;
        for (const case_data* c : cases)
            for (const traced_iteration& it : traced_iterations(*c)) {
                const overlap_summary s = summarize_overlap(it.events);
                tables.emplace_back(fmt::format("overlap_{}_{}", tables.size(), it.reason),
                                    overlap_table(case_label(*c, true), it, s));
                if (!people)
                    continue;
                print_tables(out, m_common.format, {tables.back()});
                out << terminal_lines(verdict_lines(s)) << "\n";
            }
        if (!people) // one document: the tables alone
            print_tables(out, m_common.format, tables);
        return 0;
    }

    std::string m_case;
};

} // namespace

RINGSCALE_STATS_FACTORY(overlap, overlap_command)

} // namespace ringscale::analysis
