// `ringscale-stats trace INPUT... [--case TEXT] [--iteration median|slowest] -o FILE`: the
// traced iterations (launched with --trace) as Chrome trace-event JSON for Perfetto.
#include "shared.hpp"

#include "analysis/measures/overlap.hpp"
#include "analysis/presentation/export.hpp"
#include "analysis/presentation/trace_json.hpp"

#include "src/base/error.hpp"
#include "src/base/whole_file.hpp"

#include <iostream>

namespace ringscale::analysis {

namespace {

struct trace_command final : input_command {
    const char* name() const override { return "trace"; }
    const char* help() const override {
        return "A traced iteration (launched with --trace) as Chrome trace-event JSON: open it "
               "in Perfetto or chrome://tracing.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common, false);
        d.add_options()("output,o", po::value<std::string>(&m_output),
                        "the JSON file to write ('-': stdout)")(
            "case", po::value<std::string>(&m_case),
            "only the cases whose label (as summary shows it, with P=) contains this text")(
            "iteration", po::value<std::string>(&m_iteration)->default_value("median"),
            "which kept iteration: median | slowest (--trace 2)");
    }
    void finish(const po::variables_map&, std::vector<std::string> args) override {
        RINGSCALE_REQUIRE(!m_output.empty(), "trace needs -o FILE ('-': stdout)");
        RINGSCALE_REQUIRE(m_iteration == "median" || m_iteration == "slowest",
                          "trace: --iteration must be median or slowest");
        take_inputs(name(), std::move(args), m_common);
    }
    int run(std::ostream&) const override {
        std::vector<std::string> ignored;
        if (m_output != "-") // before anything is read: a trace never replaces results
            try {
                refuse_overwriting_results(m_output, expand_inputs(m_common.inputs, ignored));
            } catch (const config_error& e) { // export's words, said of the trace
                std::string why = e.what();
                for (const auto& [from, to] :
                     {std::pair<std::string, std::string>{"export: ", "trace: "},
                      {"for the export", "for the trace"}})
                    if (const auto at = why.find(from); at != std::string::npos)
                        why.replace(at, from.size(), to);
                throw config_error(why);
            }
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto cases = traced_cases(rs.cases, m_case);
        if (cases.empty())
            throw config_error(m_case.empty() ? "no case has a trace (launch with --trace 1)"
                                              : "no traced case matches --case");
        std::vector<std::vector<traced_iteration>> kept;
        std::vector<trace_source> sources;
        for (const case_data* c : cases)
            kept.push_back(traced_iterations(*c));
        for (std::size_t i = 0; i < cases.size(); ++i)
            for (const traced_iteration& it : kept[i])
                if (it.reason == m_iteration)
                    sources.push_back({case_label(*cases[i], true), &it});
        if (sources.empty())
            throw config_error("no case kept its " + m_iteration +
                               " iteration (the slowest needs --trace 2)");
        const std::string text = json_text(chrome_trace(sources), -1);
        if (m_output == "-")
            std::cout << text << "\n";
        else
            write_whole_file(m_output, [&](std::ostream& s) { s << text << "\n"; });
        return 0;
    }

    std::string m_output;
    std::string m_case;
    std::string m_iteration;
};

} // namespace

RINGSCALE_STATS_FACTORY(trace, trace_command)

} // namespace ringscale::analysis
