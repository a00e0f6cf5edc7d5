// Job `collectives`: nccl-tests-style bandwidth of allreduce, allgather, reduce-scatter,
// all-to-all, send/recv and broadcast on float32 data, every result checked exactly.
#include "jobs/collectives_ops.hpp"
#include "jobs/job.hpp"
#include "src/error.hpp"
#include "src/memory.hpp"
#include "src/parse.hpp"

#include <fmt/format.h>

namespace ringscale::jobs {

namespace {

class collectives_case final : public job_case {
  public:
    collectives_case(const collective_op& op, const collective_sizes& sz, int root,
                     comm::communicator& c)
        : m_op(op), m_sz(sz), m_root(root), m_comm(c) {}

    attr_map describe() const override {
        const int p = m_comm.size();
        return {{"bytes", static_cast<std::int64_t>(m_sz.bytes)},
                {"count", static_cast<std::int64_t>(m_sz.count)},
                {"busbw_factor", m_op.busbw_factor(p)},
                {"comm_bytes_per_iter", static_cast<double>(m_sz.bytes) * m_op.busbw_factor(p)},
                {"flops_per_iter", 0.0},
                {"root", static_cast<std::int64_t>(m_root)}};
    }

    void setup() override {
        m_send.assign(m_sz.send_count, 0.0f);
        m_recv.assign(m_sz.recv_count, 0.0f);
        for (std::size_t i = 0; i < m_send.size(); ++i)
            m_send[i] = collective_value(m_comm.rank(), i);
    }

    void iterate(phase_timer& timer) override {
        auto wait = timer.time(phase::comm_wait); // the whole operation is communication
        m_op.run(m_comm, m_send.data(), m_recv.data(), m_sz, m_root);
    }

    validation validate() override {
        // Overwrite the output with a sentinel and run once more, so a stale buffer from an
        // earlier iteration can never pass for a correct one.
        std::fill(m_recv.begin(), m_recv.end(), -1e30f);
        m_op.run(m_comm, m_send.data(), m_recv.data(), m_sz, m_root);
        validation v;
        v.checked = true;
        v.wrong = m_op.count_wrong(m_comm.rank(), m_comm.size(), m_recv.data(), m_sz, m_root);
        v.ok = v.wrong == 0;
        v.tolerance = 0;
        if (!v.ok)
            v.detail = fmt::format("{} wrong elements", v.wrong);
        return v;
    }

  private:
    const collective_op& m_op;
    collective_sizes m_sz;
    int m_root;
    comm::communicator& m_comm;
    host_buffer<float> m_send, m_recv;
};

class collectives_job final : public job {
  public:
    std::string name() const override { return "collectives"; }
    std::string summary() const override {
        return "bandwidth of MPI/NCCL collectives, busbw as in nccl-tests, results checked";
    }
    std::vector<option_spec> options() const override {
        return {{"op", "all",
                 "allreduce|allgather|reduce_scatter|alltoall|sendrecv|broadcast|all (list ok)"},
                {"min-bytes", "1K", "smallest message in bytes (K/M/G suffixes)", false, 'b'},
                {"max-bytes", "16M", "largest message in bytes", false, 'e'},
                {"step-factor", "4", "multiply the size by this between cases (>= 2)", false, 'f'},
                {"root", "0", "root rank of broadcast"}};
    }

    std::vector<case_plan> plan(const param_lists& lists,
                                const launch_info& launch) const override {
        const std::uint64_t lo = parse_size(single_value(lists, "min-bytes"), "min-bytes");
        const std::uint64_t hi = parse_size(single_value(lists, "max-bytes"), "max-bytes");
        const std::int64_t f = parse_int(single_value(lists, "step-factor"), "step-factor");
        const std::int64_t root = parse_int(single_value(lists, "root"), "root");
        if (lo == 0)
            throw config_error("--min-bytes: must be greater than zero");
        if (lo > hi)
            throw config_error(fmt::format("--min-bytes ({}) is above --max-bytes ({})",
                                           format_size(lo), format_size(hi)));
        if (f < 2)
            throw config_error(fmt::format("--step-factor: {} is below 2", f));
        if (root < 0 || root >= launch.world_size)
            throw config_error(fmt::format("--root: {} is not a rank of this {}-rank launch", root,
                                           launch.world_size));
        std::vector<case_plan> cases;
        for (const collective_op* op : ops_from_list(lists.at("op"))) {
            for (std::uint64_t bytes = lo; bytes <= hi; bytes *= static_cast<std::uint64_t>(f)) {
                case_plan c;
                c.job = name();
                c.variant = op->name;
                c.values.set("op", op->name);
                c.values.set("root", std::to_string(root));
                const collective_sizes sz = op->sizes(bytes, launch.world_size);
                c.values.set("requested_bytes", std::to_string(bytes));
                c.bytes_per_rank = (sz.send_count + sz.recv_count) * sizeof(float);
                if (sz.count == 0) {
                    c.skippable = true;
                    c.skip_reason = "message smaller than one float32 per rank";
                }
                cases.push_back(std::move(c));
                if (bytes > hi / static_cast<std::uint64_t>(f))
                    break;
            }
        }
        return cases;
    }

    std::unique_ptr<job_case> make_case(const case_plan& plan, run_context& ctx) const override {
        const collective_op& op = find_op(plan.values.text("op"));
        const auto bytes = plan.values.size("requested_bytes");
        return std::make_unique<collectives_case>(op, op.sizes(bytes, ctx.world.size()),
                                                  static_cast<int>(plan.values.integer("root")),
                                                  ctx.world);
    }

    std::vector<table_column> columns() const override {
        return {{"op", 14},          {"size(B)", 11},     {"count", 10},
                {"algbw(GB/s)", 11}, {"busbw(GB/s)", 11}, {"#wrong", 7}};
    }

    std::vector<std::string> row(const case_summary& s) const override {
        const double bytes = attr_number(s.attrs, "bytes");
        const double t = s.median_time_s;
        const double algbw = t > 0 ? bytes / t / 1e9 : 0;
        const double busbw = algbw * attr_number(s.attrs, "busbw_factor");
        return {s.plan->variant,
                fmt::format("{:.0f}", bytes),
                fmt::format("{:.0f}", attr_number(s.attrs, "count")),
                t > 0 ? fmt::format("{:.3f}", algbw) : "-",
                t > 0 ? fmt::format("{:.3f}", busbw) : "-",
                s.check.checked ? fmt::format("{}", s.check.wrong) : "-"};
    }
};

} // namespace

std::unique_ptr<job> make_collectives_job() {
    return std::make_unique<collectives_job>();
}

} // namespace ringscale::jobs
