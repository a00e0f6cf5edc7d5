#include "tests/analysis/analysis_fixture.hpp"

#include "analysis/statistics/bootstrap.hpp"
#include "src/base/h5.hpp"
#include "src/base/results_schema.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace ringscale::test_fixture {

namespace {

/// Standard normal deviate by Box-Muller from the platform-independent generator.
double normal(analysis::splitmix64& rng) {
    const double u1 = (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::vector<double> synth_times(const fixture_case& c, std::size_t rows, std::size_t world) {
    if (!c.explicit_time_s.empty())
        return c.explicit_time_s;
    analysis::splitmix64 rng(c.seed);
    std::vector<double> t(rows * world);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t k = 0; k < world; ++k) {
            const double skew = k < c.rank_skew.size() ? c.rank_skew[k] : 1.0;
            const double warm = r < static_cast<std::size_t>(c.warmup) ? 3.0 : 1.0;
            t[r * world + k] = c.base_time_s * skew * warm * std::exp(c.noise * normal(rng));
        }
    return t;
}

/// The case's attributes by group; ringscale/1 wrote them all on the case group.
void write_case_attrs(const h5::group& g, const fixture_case& c, const fixture_file& f) {
    const bool v1 = f.schema == schema::version_1;
    auto group = [&](schema::attr_group which) {
        return v1 ? g.open_group(".") : g.create_group(schema::group_name(which));
    };
    const h5::group id = group(schema::attr_group::identity);
    id.set_attr("job", c.job);
    id.set_attr("variant", c.variant);
    id.set_attr("world_size", static_cast<std::int64_t>(c.world_size));
    id.set_attr("scaling", c.scaling);
    if (!v1)
        id.set_attr("threads", static_cast<std::int64_t>(0));
    for (const auto& [k, v] : c.text_params)
        id.set_attr(k, v);
    for (const auto& [k, v] : c.int_params)
        id.set_attr(k, v);
    const h5::group run = group(schema::attr_group::run);
    run.set_attr("warmup", static_cast<std::int64_t>(c.warmup));
    run.set_attr("iterations", static_cast<std::int64_t>(c.iterations));
    const h5::group derived = group(schema::attr_group::derived);
    for (const auto& [k, v] : c.float_params)
        derived.set_attr(k, v);
    if (!v1)
        derived.set_attr("threads_per_rank", static_cast<std::int64_t>(f.threads_per_rank));
    const h5::group outcome = group(schema::attr_group::outcome);
    outcome.set_attr("status", c.status);
    outcome.set_attr("error", c.error);
    outcome.set_attr("validated", static_cast<std::int64_t>(1));
    outcome.set_attr("max_abs_err", 0.0);
    outcome.set_attr("tolerance", 1e-4);
    for (const auto& [k, v] : c.outcome_params)
        outcome.set_attr(k, v);
}

/// Peak memory per rank, the training categories, threads and allowed cores.
void write_case_memory(const h5::group& g, const fixture_case& c, const fixture_file& f) {
    const std::size_t world = static_cast<std::size_t>(c.world_size);
    std::vector<std::uint64_t> host(world), rss(world);
    for (std::size_t r = 0; r < world; ++r) {
        const double skew = r < c.rank_memory_skew.size() ? c.rank_memory_skew[r] : 1.0;
        host[r] = static_cast<std::uint64_t>(static_cast<double>(c.peak_host_bytes) * skew);
        rss[r] = static_cast<std::uint64_t>(static_cast<double>(c.peak_rss_bytes) * skew);
    }
    g.write<std::uint64_t>(schema::ds_peak_host_bytes, host, {world});
    g.write<std::uint64_t>(schema::ds_peak_device_bytes, std::vector<std::uint64_t>(world, 0),
                           {world});
    g.write<std::uint64_t>(schema::ds_peak_rss_bytes, rss, {world});
    if (c.with_loss)
        for (const std::string& name : schema::training_memory_datasets())
            g.write<double>(name, std::vector<double>(world, static_cast<double>(host[0]) / 8),
                            {world});
    if (f.schema == schema::version_1)
        return;
    const int cores = c.affinity_cores > 0 ? c.affinity_cores : f.threads_per_rank;
    g.write<std::int32_t>(schema::ds_threads, std::vector<std::int32_t>(world, f.threads_per_rank),
                          {world});
    g.write<std::int32_t>(schema::ds_affinity_cores, std::vector<std::int32_t>(world, cores),
                          {world});
    g.write_strings(schema::ds_affinity_list, std::vector<std::string>(world, "0"));
}

void write_case(const h5::group& cases, std::size_t index, const fixture_case& c,
                const fixture_file& f) {
    const h5::group g = cases.create_group(fmt::format("{:04}", index));
    write_case_attrs(g, c, f);
    if (c.status == "skipped")
        return; // a skipped case carries no timings
    const std::size_t world = static_cast<std::size_t>(c.world_size);
    const std::size_t rows = static_cast<std::size_t>(c.warmup + c.iterations);
    const std::vector<double> t = synth_times(c, rows, world);
    g.write<double>("time_s", t, {rows, world});
    if (c.with_phases) {
        std::vector<double> compute(t.size()), comm(t.size());
        for (std::size_t i = 0; i < t.size(); ++i) {
            comm[i] = t[i] * c.comm_fraction;
            compute[i] = c.compute_fraction < 0 ? t[i] - comm[i] : t[i] * c.compute_fraction;
        }
        g.write<double>("compute_s", compute, {rows, world});
        g.write<double>("comm_wait_s", comm, {rows, world});
        if (c.cpu_per_wall_s > 0) {
            std::vector<double> cpu(t.size()), compute_cpu(t.size());
            for (std::size_t i = 0; i < t.size(); ++i) {
                cpu[i] = t[i] * c.cpu_per_wall_s;
                compute_cpu[i] = compute[i] * c.cpu_per_wall_s;
            }
            g.write<double>(schema::ds_cpu_s, cpu, {rows, world});
            g.write<double>(schema::ds_compute_cpu_s, compute_cpu, {rows, world});
        }
    }
    std::vector<std::uint8_t> warm(rows, 0);
    for (int r = 0; r < c.warmup; ++r)
        warm[static_cast<std::size_t>(r)] = 1;
    g.write<std::uint8_t>("is_warmup", warm, {rows});
    write_case_memory(g, c, f);
    if (!c.machine.empty()) {
        const h5::group m = g.create_group(schema::machine_group);
        for (const auto& [name, v] : c.machine)
            m.write<double>(name, v, {v.size()});
    }
    if (!c.numerics.empty()) {
        const h5::group m = g.create_group("numerics");
        for (const auto& [name, v] : c.numerics)
            m.write<double>(name, v, {v.size()});
    }
    if (c.with_loss) {
        std::vector<double> loss(rows);
        for (std::size_t r = 0; r < rows; ++r)
            loss[r] = 10.0 / (1.0 + static_cast<double>(r));
        g.write<double>("loss", loss, {rows});
    }
}

} // namespace

void write_fixture_file(const std::string& path, const fixture_file& f) {
    auto file = h5::file::create(path);
    const h5::group root = file.root();
    root.set_attr("schema", f.schema);
    root.set_attr("created_utc", f.created_utc);
    if (!f.launch_id.empty())
        root.set_attr(schema::root_attr::launch_id, f.launch_id);
    root.set_attr("tool_version", "fixture");
    root.set_attr("git_commit", f.git_commit);
    root.set_attr("complete", static_cast<std::int64_t>(f.complete ? 1 : 0));
    const h5::group meta = root.create_group("meta");
    meta.set_attr("device", "cpu");
    meta.set_attr("device_name", f.device_name);
    meta.set_attr("threads_per_rank", static_cast<std::int64_t>(f.threads_per_rank));
    meta.set_attr("timer", "steady_clock");
    for (const auto& [k, v] : f.labels)
        meta.set_attr(schema::meta_attr::label_prefix + k, v);
    for (const auto& [k, v] : f.int_meta)
        meta.set_attr(k, v);
    for (const auto& [k, v] : f.text_meta)
        meta.set_attr(k, v);
    meta.write_strings("cmdline", {"ringscale", "--fixture"});
    meta.write_strings("hosts", {"localhost"});
    meta.write_string("config", "# synthetic test fixture\nthreads = 0\n");
    const h5::group ranks = root.create_group("ranks");
    const int world = f.cases.empty() ? 1 : f.cases.front().world_size;
    ranks.write<std::int32_t>("host_index", std::vector<std::int32_t>(world, 0),
                              {static_cast<hsize_t>(world)});
    std::vector<std::int32_t> local(world);
    for (int i = 0; i < world; ++i)
        local[static_cast<std::size_t>(i)] = i;
    ranks.write<std::int32_t>("local_rank", local, {static_cast<hsize_t>(world)});
    const h5::group cases = root.create_group("cases");
    for (std::size_t i = 0; i < f.cases.size(); ++i)
        write_case(cases, i, f.cases[i], f);
    file.flush();
}

std::string fixture_dir(const std::string& tag) {
    const std::string dir = fmt::format("/tmp/ringscale_fixture_{}_{}", tag, getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace ringscale::test_fixture
