// Job `ring_attention`: the whole sequence sharded over all ranks by --layout, attention by
// the ring (jobs/ring_core): K/V blocks rotate in P-1 steps and merge by log-sum-exp; with
// --overlap on the next block's exchange is posted before the current block is computed.
#include "jobs/attention_common.hpp"
#include "jobs/schemes/ring.hpp"
#include "kernels/mask_layout.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"

namespace ringscale::jobs {

namespace {

class ring_case final : public case_runner {
  public:
    ring_case(const attention_problem& pr, bool overlap, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed), m_control(ctx.control), m_dev(ctx.dev) {
        m_spec.comm = &ctx.world;
        m_spec.dev = &ctx.dev;
        m_spec.type = pr.type;
        m_spec.shape = pr.local_shape(ctx.world.size());
        m_spec.positions = &m_pos;
        m_spec.overlap = overlap;
        m_host_pos = attention_positions(pr, ctx.world.size());
        m_spec.steps = ring_steps_needed(m_spec.shape, m_host_pos);
    }

    attr_map describe() const override {
        attr_map a = attention_attrs(m_pr, m_host_pos);
        add_masked_attn_kernel(a, m_pr.mask != nullptr, m_dev.kind());
        a[schema::attr::comm_bytes_per_iter] = ring_bytes_sent(m_spec, m_pr.backward);
        return a;
    }

    void setup() override {
        for (const auto& pos : m_host_pos)
            m_pos.emplace_back(m_dev, pos);
        m_mask = kernels::dev_mask(m_dev, m_pr.mask); // the mask's arrays where kernels read them
        m_spec.shape.mask = m_mask.view();
        const auto& mine = m_host_pos[static_cast<std::size_t>(m_spec.comm->rank())];
        const std::size_t qe = ring_q_elems(m_spec), kve = ring_kv_elems(m_spec);
        const std::size_t rows = qe / static_cast<std::size_t>(m_pr.head_dim);
        std::vector<float> host(qe);
        fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
        m_q = upload_as(m_dev, m_pr.type, host);
        host.resize(2 * kve);
        fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data());
        fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data() + kve);
        m_kv = upload_as(m_dev, m_pr.type, host);
        m_o.allocate(m_dev, qe);
        m_lse.allocate(m_dev, rows);
        if (m_pr.backward) {
            host.resize(qe);
            fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
            m_do = upload_as(m_dev, m_pr.type, host);
            m_dq.allocate(m_dev, qe);
            m_delta.allocate(m_dev, rows);
            m_dkv.allocate(m_dev, 2 * kve);
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
        // Results come to the host and go over the host-memory control communicator.
        attention_result r;
        r.o = gather_global(m_control, m_pr, m_pr.heads, m_o.download().data(), m_host_pos);
        if (m_pr.backward) {
            const std::size_t kve = ring_kv_elems(m_spec);
            const std::vector<float> dkv = m_dkv.download();
            r.dq = gather_global(m_control, m_pr, m_pr.heads, m_dq.download().data(), m_host_pos);
            r.dk = gather_global(m_control, m_pr, m_pr.kv_heads, dkv.data(), m_host_pos);
            r.dv = gather_global(m_control, m_pr, m_pr.kv_heads, dkv.data() + kve, m_host_pos);
        }
        return validate_attention(m_control, m_pr, m_seed, r);
    }

  private:
    attention_problem m_pr;
    std::uint64_t m_seed;
    comm::communicator& m_control;
    kernels::executor& m_dev;
    ring_spec m_spec;
    std::vector<std::vector<std::int64_t>> m_host_pos;
    std::vector<kernels::dev_positions> m_pos;
    kernels::dev_mask m_mask;
    kernels::dev_buffer<unsigned char> m_q, m_kv, m_do; // m_pr.type
    kernels::dev_buffer<float> m_o, m_lse, m_dq, m_delta, m_dkv;
    ring_buffers m_bufs;
};

class ring_attention_job final : public job {
  public:
    std::string name() const override { return "ring_attention"; }
    std::string summary() const override {
        return "ring attention: K/V blocks rotate around the ranks, merged by log-sum-exp";
    }
    std::vector<option_decl> options() const override {
        auto opts = attention_options();
        opts.push_back(
            option_decl::flag("overlap", "on")
                .sweeps()
                .help("post the next block's exchange before computing the current one"));
        return opts;
    }
    std::vector<case_plan> plan(const std::vector<params>& sweep,
                                const launch_info& launch) const override {
        return plan_attention(
            name(), sweep, launch, {"overlap"},
            [](const attention_problem& pr, int ranks) {
                kernels::check_mask_layout(pr.layout, pr.seq_len, ranks, pr.mask.get());
            },
            memory_estimate, [](const params& p) { return "ring/" + p.text("layout"); });
    }
    std::unique_ptr<case_runner> make_case(const case_plan& plan, run_context& ctx) const override {
        return std::make_unique<ring_case>(read_attention_problem(plan.values),
                                           plan.values.flag("overlap"), ctx);
    }
    std::vector<metric> metrics(const case_plan& plan,
                                const results::case_record& rec) const override {
        std::vector<metric> out = attention_shape_metrics(plan);
        out.push_back(metric::of_text("overlap", plan.values.flag("overlap") ? "on" : "off"));
        const auto rates = attention_rate_metrics(rec);
        out.insert(out.end(), rates.begin(), rates.end());
        return out;
    }

  private:
    static std::uint64_t memory_estimate(const attention_problem& pr, int ranks, bool validate) {
        const double rows = static_cast<double>(pr.seq_len) / ranks;
        const double q = pr.batch * pr.heads * rows * pr.head_dim;
        const double kv = pr.batch * pr.kv_heads * rows * pr.head_dim;
        const double e = static_cast<double>(kernels::elem_bytes(pr.type)), f = sizeof(float);
        double bytes = e * (q + 3 * 2 * kv) + f * (q + q / pr.head_dim); // Q, own K|V, 2 ring
        if (pr.backward) // dO; dQ, dK|dV local, send and own, delta
            bytes += e * q + f * (q + 3 * 2 * kv + q / pr.head_dim);
        if (validate) // gathered global tensors plus one reference group
            bytes +=
                f * (pr.backward ? 4.0 : 1.0) * pr.batch * pr.heads * pr.seq_len * pr.head_dim * 2;
        return bytes_from_estimate(bytes + (8u << 20));
    }
};

} // namespace

std::unique_ptr<job> make_ring_attention_job() {
    return std::make_unique<ring_attention_job>();
}

} // namespace ringscale::jobs
