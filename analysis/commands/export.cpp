// `ringscale-stats export INPUT... --csv FILE --json FILE`: every iteration and rank as a
// long-format CSV, and the summary rows as JSON.
#include "shared.hpp"

#include "analysis/presentation/export.hpp"

#include "src/base/error.hpp"
#include "src/base/whole_file.hpp"

#include <functional>
#include <iostream>

namespace ringscale::analysis {

namespace {

void write_to(const std::string& path, const std::function<void(std::ostream&)>& body) {
    if (path == "-") {
        body(std::cout);
        return;
    }
    write_whole_file(path, body); // whole or absent; a symlink there is replaced, not followed
}

struct export_command final : input_command {
    const char* name() const override { return "export"; }
    const char* help() const override {
        return "Long-format CSV (case x iteration x rank) and JSON summaries.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common, false);
        d.add_options()("csv", po::value<std::string>(&m_csv_path),
                        "long-format CSV file ('-': stdout)")(
            "json", po::value<std::string>(&m_json_path), "JSON summaries file ('-': stdout)");
    }
    void finish(const po::variables_map&, std::vector<std::string> args) override {
        RINGSCALE_REQUIRE(!m_csv_path.empty() || !m_json_path.empty(),
                          "export needs --csv FILE and/or --json FILE");
        take_inputs(name(), std::move(args), m_common);
    }
    int run(std::ostream&) const override {
        // Before anything is read: an export never replaces results.
        std::vector<std::string> ignored;
        const auto files = expand_inputs(m_common.inputs, ignored);
        for (const std::string* path : {&m_csv_path, &m_json_path})
            if (!path->empty())
                refuse_overwriting_results(*path, files);
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto pooled = pool_with_notes(rs, false);
        const auto rows = summarize_with_notes(pooled, m_common);
        if (!m_csv_path.empty())
            write_to(m_csv_path, [&](std::ostream& s) { write_long_csv(rs.cases, s); });
        if (!m_json_path.empty())
            write_to(m_json_path,
                     [&](std::ostream& s) { s << json_text(summaries_json(rows)) << "\n"; });
        return 0;
    }

    std::string m_csv_path;
    std::string m_json_path;
};

} // namespace

RINGSCALE_STATS_FACTORY(export, export_command)

} // namespace ringscale::analysis
