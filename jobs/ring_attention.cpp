// Job `ring_attention`: K/V blocks rotate around the ranks in P-1 steps; each arriving block
// is merged into the running (O, LSE) by log-sum-exp. With --overlap on the next block's
// exchange is posted before the current block is computed (double buffering); the backward
// pass carries dK/dV partial sums around the ring and home to their owner.
#include "jobs/attention_common.hpp"
#include "kernels/attention_cpu.hpp"
#include "src/memory.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::jobs {

namespace {

using kernels::attention_shape;

class ring_case final : public job_case {
  public:
    ring_case(const attention_problem& pr, bool overlap, run_context& ctx)
        : m_pr(pr), m_overlap(overlap), m_c(ctx.world), m_seed(ctx.seed),
          m_shape(pr.local_shape(ctx.world.size())) {}

    attr_map describe() const override {
        const double kv_bytes = 2.0 * kv_elems() * sizeof(float);
        const int p = m_c.size();
        double sent = (p - 1) * kv_bytes;
        if (m_pr.backward)
            sent += (p - 1) * kv_bytes + p * kv_bytes; // K/V again, and dK/dV partial sums
        return {{"seq_len", m_pr.seq_len},
                {"kv_heads", m_pr.kv_heads},
                {"flops_per_iter", m_pr.flops()},
                {"comm_bytes_per_iter", sent},
                {"flop_convention", std::string("fwd 4*B*S^2*H*D (causal /2), bwd 2.5*fwd")}};
    }

    void setup() override {
        const int p = m_c.size();
        for (int r = 0; r < p; ++r)
            m_pos.push_back(kernels::layout_positions(m_pr.layout, m_pr.seq_len, p, r));
        const auto& mine = m_pos[static_cast<std::size_t>(m_c.rank())];
        m_q.resize(q_elems());
        m_o.resize(q_elems());
        m_lse.resize(lse_elems());
        m_own.resize(2 * kv_elems());
        fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, m_q.data());
        fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_own.data());
        fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, m_own.data() + kv_elems());
        for (auto& b : m_buf)
            b.resize(p > 1 ? 2 * kv_elems() : 0);
        if (m_pr.backward) {
            m_do.resize(q_elems());
            fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, m_do.data());
            m_dq.resize(q_elems());
            m_delta.resize(lse_elems());
            for (auto* b : {&m_dkv_local, &m_dkv_in, &m_dkv_out})
                b->resize(2 * kv_elems());
        }
        kernels::attention_workspace_reserve(m_ws);
    }

    void iterate(phase_timer& timer) override {
        forward(timer);
        if (m_pr.backward)
            backward(timer);
    }

    validation validate() override {
        attention_result r;
        r.o = gather_global(m_c, m_pr, m_pr.heads, m_o.data(), m_pos);
        if (m_pr.backward) {
            r.dq = gather_global(m_c, m_pr, m_pr.heads, m_dq.data(), m_pos);
            r.dk = gather_global(m_c, m_pr, m_pr.kv_heads, m_dkv_in.data(), m_pos);
            r.dv = gather_global(m_c, m_pr, m_pr.kv_heads, m_dkv_in.data() + kv_elems(), m_pos);
        }
        return validate_attention(m_c, m_pr, m_seed, r);
    }

  private:
    std::size_t q_elems() const {
        return static_cast<std::size_t>(kernels::attention_q_elems(m_shape));
    }
    std::size_t kv_elems() const {
        return static_cast<std::size_t>(kernels::attention_kv_elems(m_shape));
    }
    std::size_t lse_elems() const {
        return static_cast<std::size_t>(m_shape.batch * m_shape.heads * m_shape.q_len);
    }
    int next() const { return (m_c.rank() + 1) % m_c.size(); }
    int prev() const { return (m_c.rank() + m_c.size() - 1) % m_c.size(); }
    // The K/V block held at step s: our own at step 0, then the ring buffers in turn.
    const float* block_at(int step) const {
        return step == 0 ? m_own.data() : m_buf[static_cast<std::size_t>((step - 1) % 2)].data();
    }

    // Post the exchange for the next step; with overlap off, wait for it at once.
    comm::request_ptr exchange(const float* send, float* recv, std::size_t count, int tag,
                               phase_timer& timer) {
        auto req = m_c.isendrecv(send, count, next(), recv, count, prev(), comm::dtype::f32, tag);
        if (!m_overlap) {
            auto wait = timer.time(phase::comm_wait);
            req->wait();
        }
        return req;
    }

    void wait(comm::request_ptr& req, phase_timer& timer) {
        if (!req)
            return;
        auto scope = timer.time(phase::comm_wait);
        req->wait();
        req.reset();
    }

    bool masked(int src) const {
        const auto& q = m_pos[static_cast<std::size_t>(m_c.rank())];
        const auto& k = m_pos[static_cast<std::size_t>(src)];
        return kernels::classify_block(q.data(), m_shape.q_len, k.data(), m_shape.k_len,
                                       m_pr.causal) == kernels::block_mask::masked;
    }

    void forward(phase_timer& timer);
    void backward(phase_timer& timer);
    // One kernel call per (batch, kv-head group); between calls, outstanding requests are
    // tested so MPI keeps moving the next block while we compute.
    template <class F>
    void per_group(F&& f, comm::request* a, comm::request* b);

    attention_problem m_pr;
    bool m_overlap;
    comm::communicator& m_c;
    std::uint64_t m_seed;
    attention_shape m_shape;
    std::vector<std::vector<std::int64_t>> m_pos;
    host_buffer<float> m_q, m_o, m_lse, m_own, m_buf[2];
    host_buffer<float> m_do, m_dq, m_delta, m_dkv_local, m_dkv_in, m_dkv_out;
    kernels::attention_workspace m_ws;
};

template <class F>
void ring_case::per_group(F&& f, comm::request* a, comm::request* b) {
    const std::int64_t g = m_shape.heads / m_shape.kv_heads;
    attention_shape one = m_shape;
    one.batch = 1;
    one.heads = g;
    one.kv_heads = 1;
    for (std::int64_t bt = 0; bt < m_shape.batch; ++bt)
        for (std::int64_t kvh = 0; kvh < m_shape.kv_heads; ++kvh) {
            const std::int64_t qh = bt * m_shape.heads + kvh * g, kh = bt * m_shape.kv_heads + kvh;
            f(one, qh * m_shape.q_len, kh * m_shape.k_len);
            if (a)
                a->test();
            if (b)
                b->test();
        }
}

void ring_case::forward(phase_timer& timer) {
    const int p = m_c.size(), me = m_c.rank();
    const std::int64_t d = m_shape.head_dim;
    const auto& q_pos = m_pos[static_cast<std::size_t>(me)];
    {
        auto compute = timer.time(phase::compute);
        kernels::attention_fwd_init(m_shape, m_o.data(), m_lse.data());
    }
    for (int s = 0; s < p; ++s) {
        const float* kv = block_at(s);
        const int src = kernels::ring_source_rank(me, s, p);
        comm::request_ptr req;
        if (s < p - 1)
            req = exchange(kv, m_buf[s % 2].data(), 2 * kv_elems(), 1, timer);
        if (!masked(src)) {
            auto compute = timer.time(phase::compute);
            const auto& k_pos = m_pos[static_cast<std::size_t>(src)];
            per_group(
                [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
                    kernels::attention_fwd_cpu(one, m_q.data() + q_row * d, kv + k_row * d,
                                               kv + kv_elems() + k_row * d, q_pos.data(),
                                               k_pos.data(), m_o.data() + q_row * d,
                                               m_lse.data() + q_row, m_ws);
                },
                req.get(), nullptr);
        }
        wait(req, timer);
    }
}

void ring_case::backward(phase_timer& timer) {
    const int p = m_c.size(), me = m_c.rank();
    const std::int64_t d = m_shape.head_dim;
    const std::size_t dkv = 2 * kv_elems();
    const auto& q_pos = m_pos[static_cast<std::size_t>(me)];
    {
        auto compute = timer.time(phase::compute);
        kernels::attention_bwd_delta(m_shape, m_o.data(), m_do.data(), m_delta.data());
        std::fill(m_dq.begin(), m_dq.end(), 0.0f);
    }
    comm::request_ptr req_dkv;
    for (int s = 0; s < p; ++s) {
        const float* kv = block_at(s);
        const int src = kernels::ring_source_rank(me, s, p);
        comm::request_ptr req_kv;
        if (s < p - 1)
            req_kv = exchange(kv, m_buf[s % 2].data(), dkv, 1, timer);
        {
            auto compute = timer.time(phase::compute);
            std::fill(m_dkv_local.begin(), m_dkv_local.end(), 0.0f);
            if (!masked(src)) {
                const auto& k_pos = m_pos[static_cast<std::size_t>(src)];
                per_group(
                    [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
                        kernels::attention_bwd_cpu(
                            one, m_q.data() + q_row * d, kv + k_row * d,
                            kv + kv_elems() + k_row * d, m_do.data() + q_row * d,
                            m_lse.data() + q_row, m_delta.data() + q_row, q_pos.data(),
                            k_pos.data(), m_dq.data() + q_row * d, m_dkv_local.data() + k_row * d,
                            m_dkv_local.data() + kv_elems() + k_row * d, m_ws);
                    },
                    req_kv.get(), req_dkv.get());
            }
        }
        // The partial dK/dV of this block from its earlier holders arrives from prev; add
        // ours and pass the sum on. After P steps each block's sum is back at its owner.
        wait(req_dkv, timer);
        {
            auto compute = timer.time(phase::compute);
            for (std::size_t i = 0; i < dkv; ++i)
                m_dkv_out[i] = m_dkv_local[i] + (s > 0 ? m_dkv_in[i] : 0.0f);
        }
        req_dkv = exchange(m_dkv_out.data(), m_dkv_in.data(), dkv, 2, timer);
        wait(req_kv, timer);
    }
    wait(req_dkv, timer); // m_dkv_in now holds the complete dK/dV of our own block
}

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
        return plan_attention(
            name(), lists, launch, {"overlap"},
            [](const attention_problem& pr, int ranks) {
                kernels::check_layout(pr.layout, pr.seq_len, ranks);
            },
            memory_estimate, [](const params& p) { return "ring/" + p.text("layout"); });
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
