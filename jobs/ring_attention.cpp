// Job `ring_attention`: the whole sequence sharded over all ranks by --layout, attention by
// the ring (jobs/ring_core): K/V blocks rotate in P-1 steps and merge by log-sum-exp; with
// --overlap on the next block's exchange is posted before the current block is computed.
#include "jobs/attention_common.hpp"
#include "jobs/ring_core.hpp"

namespace ringscale::jobs {

namespace {

class ring_case final : public job_case {
  public:
    ring_case(const attention_problem& pr, bool overlap, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed) {
        m_spec.comm = &ctx.world;
        m_spec.shape = pr.local_shape(ctx.world.size());
        m_spec.positions = &m_pos;
        m_spec.overlap = overlap;
    }

    attr_map describe() const override {
        return {{"seq_len", m_pr.seq_len},
                {"kv_heads", m_pr.kv_heads},
                {"flops_per_iter", m_pr.flops()},
                {"comm_bytes_per_iter", ring_bytes_sent(m_spec, m_pr.backward)},
                {"flop_convention", std::string("fwd 4*B*S^2*H*D (causal /2), bwd 2.5*fwd")}};
    }

    void setup() override {
        const int p = m_spec.comm->size();
        for (int r = 0; r < p; ++r)
            m_pos.push_back(kernels::layout_positions(m_pr.layout, m_pr.seq_len, p, r));
        const auto& mine = m_pos[static_cast<std::size_t>(m_spec.comm->rank())];
        const std::size_t qe = ring_q_elems(m_spec), kve = ring_kv_elems(m_spec);
        const std::size_t rows = qe / static_cast<std::size_t>(m_pr.head_dim);
        m_q.resize(qe);
        m_o.resize(qe);
        m_lse.resize(rows);
        m_kv.resize(2 * kve);
        fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, m_q.data());
        fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_kv.data());
        fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_kv.data() + kve);
        if (m_pr.backward) {
            m_do.resize(qe);
            fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, m_do.data());
            m_dq.resize(qe);
            m_delta.resize(rows);
            m_dkv.resize(2 * kve);
        }
        m_bufs.reserve(m_spec, m_pr.backward);
    }

    void iterate(phase_timer& timer) override {
        ring_forward(m_spec, m_q.data(), m_kv.data(), m_o.data(), m_lse.data(), m_bufs, timer);
        if (m_pr.backward)
            ring_backward(m_spec, m_q.data(), m_kv.data(), m_o.data(), m_do.data(), m_lse.data(),
                          m_delta.data(), m_dq.data(), m_dkv.data(), m_bufs, timer);
    }

    validation validate() override {
        comm::communicator& c = *m_spec.comm;
        attention_result r;
        r.o = gather_global(c, m_pr, m_pr.heads, m_o.data(), m_pos);
        if (m_pr.backward) {
            const std::size_t kve = ring_kv_elems(m_spec);
            r.dq = gather_global(c, m_pr, m_pr.heads, m_dq.data(), m_pos);
            r.dk = gather_global(c, m_pr, m_pr.kv_heads, m_dkv.data(), m_pos);
            r.dv = gather_global(c, m_pr, m_pr.kv_heads, m_dkv.data() + kve, m_pos);
        }
        return validate_attention(c, m_pr, m_seed, r);
    }

  private:
    attention_problem m_pr;
    std::uint64_t m_seed;
    ring_spec m_spec;
    std::vector<std::vector<std::int64_t>> m_pos;
    host_buffer<float> m_q, m_o, m_lse, m_kv, m_do, m_dq, m_delta, m_dkv;
    ring_buffers m_bufs;
};

class ring_attention_job final : public job {
  public:
    std::string name() const override { return "ring_attention"; }
    std::string summary() const override {
        return "ring attention: K/V blocks rotate around the ranks, merged by log-sum-exp";
    }
    std::vector<option_spec> options() const override {
        auto opts = attention_options();
        opts.push_back(
            {"overlap", "on",
             "post the next block's exchange before computing the current one (on/off)"});
        return opts;
    }
    std::vector<case_plan> plan(const param_lists& lists,
                                const launch_info& launch) const override {
        auto cases = plan_attention(
            name(), lists, launch, {"overlap"},
            [](const attention_problem& pr, int ranks) {
                kernels::check_layout(pr.layout, pr.seq_len, ranks);
            },
            memory_estimate, [](const params& p) { return "ring/" + p.text("layout"); });
        for (const auto& c : cases)
            c.values.flag("overlap"); // a malformed value is refused before any work
        return cases;
    }
    std::unique_ptr<job_case> make_case(const case_plan& plan, run_context& ctx) const override {
        return std::make_unique<ring_case>(read_attention_problem(plan.values),
                                           plan.values.flag("overlap"), ctx);
    }
    std::vector<table_column> columns() const override {
        auto cols = attention_columns();
        cols.insert(cols.begin() + 6, {"overlap", 7});
        return cols;
    }
    std::vector<std::string> row(const case_summary& s) const override {
        auto cells = attention_row(s);
        cells.insert(cells.begin() + 6, s.plan->values.flag("overlap") ? "on" : "off");
        return cells;
    }

  private:
    static std::uint64_t memory_estimate(const attention_problem& pr, int ranks, bool validate) {
        const double rows = static_cast<double>(pr.seq_len) / ranks;
        const double q = pr.batch * pr.heads * rows * pr.head_dim;
        const double kv = pr.batch * pr.kv_heads * rows * pr.head_dim;
        double floats = 2 * q + 3 * 2 * kv; // Q, O; own K/V and two ring buffers
        if (pr.backward)
            floats += 2 * q + 3 * 2 * kv; // dO, dQ; dK/dV local, in, out
        if (validate)                     // gathered global tensors plus one reference group
            floats +=
                (pr.backward ? 4.0 : 1.0) * pr.batch * pr.heads * pr.seq_len * pr.head_dim * 2;
        return static_cast<std::uint64_t>(floats * sizeof(float)) + (8u << 20);
    }
};

} // namespace

std::unique_ptr<job> make_ring_attention_job() {
    return std::make_unique<ring_attention_job>();
}

} // namespace ringscale::jobs
