#include "export.hpp"

#include "analysis/cases/cases.hpp"
#include "table.hpp"
#include "views.hpp"

#include "src/base/error.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace ringscale::analysis {

void write_long_csv(const std::vector<case_data>& cases, std::ostream& out) {
    out << long_csv_header << '\n';
    fmt::memory_buffer buf;
    for (const case_data& c : cases) {
        const std::string prefix =
            fmt::format("{},{},{},{},{},{},{},{}", csv_field(c.file->path), csv_field(c.group),
                        c.file->complete ? 1 : 0, csv_field(c.job), csv_field(c.variant),
                        c.world_size, csv_field(case_label(c, false)), csv_field(c.status));
        for (std::size_t r = 0; r < c.rows; ++r) {
            const int warm = r < c.is_warmup.size() ? c.is_warmup[r] : 0;
            for (std::size_t k = 0; k < c.world; ++k) {
                const std::size_t i = r * c.world + k;
                fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},", prefix, r, warm, k,
                               c.time_s[i]);
                if (!c.compute_s.empty())
                    fmt::format_to(std::back_inserter(buf), "{}", c.compute_s[i]);
                buf.push_back(',');
                if (!c.comm_wait_s.empty())
                    fmt::format_to(std::back_inserter(buf), "{}", c.comm_wait_s[i]);
                buf.push_back('\n');
            }
            if (buf.size() > (1 << 20)) {
                out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
                buf.clear();
            }
        }
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void refuse_overwriting_results(const std::string& path, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path == "-" || !fs::exists(path, ec))
        return;
    for (const std::string& in : inputs)
        if (fs::equivalent(path, in, ec))
            throw config_error(fmt::format(
                "export: '{}' is one of the input files; give a new file for the export", path));
    char magic[8] = {};
    std::ifstream f(path, std::ios::binary);
    if (f.read(magic, sizeof magic) && std::string(magic, sizeof magic) == "\x89HDF\r\n\x1a\n")
        throw config_error(fmt::format(
            "export: '{}' is an HDF5 file (results?); give a new file for the export", path));
}

nlohmann::json summaries_json(const std::vector<case_summary>& rows) {
    table t = summary_table(rows);
    nlohmann::json cases = to_json(t);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [k, v] : rows[i].source->params)
            params[k] = v;
        cases[i]["job"] = rows[i].source->job;
        cases[i]["variant"] = rows[i].source->variant;
        cases[i]["params"] = params;
        cases[i]["rejected"] = rows[i].rejected;
        cases[i]["flags"] = rows[i].flags; // column -> "no-op" | "impossible"; its value is null
    }
    return {{"schema", "ringscale-stats/summary/1"}, {"cases", cases}};
}

} // namespace ringscale::analysis
