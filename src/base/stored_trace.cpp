#include "src/base/stored_trace.hpp"

#include "src/base/error.hpp"
#include "src/base/trace_events.hpp"

#include <fmt/format.h>

namespace ringscale::stored {

namespace {

// One column of `m`, refused unless one-dimensional with `expected` values (first: any up to
// `limit`, which sets expected for the next).
std::vector<double> read_column(const h5::group& m, const std::string& name, std::uint64_t limit,
                                std::int64_t& expected, std::uint64_t max_bytes) {
    return m.read<double>(name, nullptr, max_bytes, [&](const h5::dataset_info& i) {
        if (i.dims.size() != 1 || i.dims[0] > limit ||
            (expected >= 0 && i.dims[0] != static_cast<std::uint64_t>(expected)))
            throw error(error_kind::hdf5, fmt::format("trace/{} has another length", name));
        expected = static_cast<std::int64_t>(i.dims[0]);
    });
}

std::string short_text(const std::string& what) {
    const auto nl = what.find('\n');
    return nl == std::string::npos ? what : what.substr(0, nl);
}

} // namespace

void write_trace(const h5::group& g, const results::case_record& rec) {
    const h5::group m = g.create_group(trace_group);
    for (const auto& [name, values] : rec.trace)
        m.write<double>(name, values, {static_cast<hsize_t>(values.size())});
}

void read_trace(const h5::group& g, results::case_record& rec, std::uint64_t max_bytes) {
    try {
        if (!g.exists(trace_group))
            return;
        const h5::group m = g.open_group(trace_group);
        std::map<std::string, std::vector<double>> out;
        std::int64_t events = -1, kept = -1;
        for (const std::string& name : trace::column_names())
            out[name] = read_column(m, name, trace_max_events, events, max_bytes);
        for (const std::string& name : trace::kept_column_names())
            out[name] = read_column(m, name, 16, kept, max_bytes);
        std::int64_t world = rec.world;
        out["rank_host"] =
            read_column(m, "rank_host", static_cast<std::uint64_t>(rec.world), world, max_bytes);
        for (const double h : out["rank_host"])
            if (!(h >= 0 && h < rec.world))
                throw error(error_kind::hdf5, "trace/rank_host outside the case's ranks");
        const auto checked = trace::from_columns(out); // kinds, ranges, end after start
        for (const trace::event& e : checked)
            if (e.rank < 0 || e.rank >= rec.world)
                throw error(error_kind::hdf5, "trace event of a rank outside the case");
        rec.trace = std::move(out);
    } catch (const std::exception& e) {
        rec.read_notes.push_back("trace dropped: " + short_text(e.what()));
    }
}

} // namespace ringscale::stored
