#include "jobs/attention_case.hpp"
#include "jobs/attention_accuracy.hpp"
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_cost.hpp"

#include <array>

#include "src/base/results_schema.hpp"

namespace ringscale::jobs {

namespace {

class attention_case final : public case_runner {
  public:
    attention_case(const attention_problem& pr, schemes::cp_config scheme, run_context& ctx)
        : m_pr(pr), m_seed(ctx.seed), m_sample(ctx.launch.accuracy_sample),
          m_rank(ctx.world.rank()), m_control(ctx.control), m_dev(ctx.dev),
          m_shape(pr.local_shape(ctx.world.size())),
          m_pos(attention_positions(pr, ctx.world.size())) {
        scheme.type = pr.type;
        scheme.merge_in_dtype = pr.merge_in_dtype;
        scheme.keep_forward = true;
        m_scheme = schemes::make_cp_attention(scheme, ctx.world, ctx.dev, m_shape, m_pos);
    }

    attr_map describe() const override {
        attr_map a = attention_attrs(m_pr, m_scheme->work_positions());
        add_masked_attn_kernel(a, m_pr.mask != nullptr, m_dev.kind());
        add_dtype_emulation(a, m_pr.type, m_dev.kind());
        m_scheme->describe(a);
        a[schema::attr::comm_bytes_per_iter] = m_scheme->bytes_sent(m_pr.backward);
        return a;
    }

    void setup() override {
        m_mask = kernels::dev_mask(m_dev, m_pr.mask); // the mask's arrays where kernels read them
        m_shape.mask = m_mask.view();
        const auto& mine = m_pos[static_cast<std::size_t>(m_rank)];
        if (m_pr.type == kernels::elem::e4m3)
            set_fp8_scales(mine);
        const std::size_t qe = q_elems(), kve = kv_elems();
        std::vector<float> host(qe);
        fill_shard(tensor_id::q, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
        m_q = upload_as(m_dev, m_pr.type, host, m_pr.fp8_scale[0]);
        host.resize(2 * kve);
        fill_shard(tensor_id::k, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data());
        fill_shard(tensor_id::v, m_seed, m_pr, 0, m_pr.kv_heads, mine, host.data() + kve);
        if (m_pr.type == kernels::elem::e4m3) // K and V each at its own scale, encoded below
            for (std::size_t i = 0; i < 2 * kve; ++i)
                host[i] *= m_pr.fp8_scale[i < kve ? 1 : 2];
        m_kv = upload_as(m_dev, m_pr.type, host);
        m_o.allocate(m_dev, qe);
        if (m_pr.backward) {
            host.resize(qe);
            fill_shard(tensor_id::d_out, m_seed, m_pr, 0, m_pr.heads, mine, host.data());
            m_do = upload_as(m_dev, m_pr.type, host, m_pr.fp8_scale_do);
            m_dq.allocate(m_dev, qe);
            m_dkv.allocate(m_dev, 2 * kve);
        }
        m_scheme->prepare(m_shape, m_pr.backward);
        m_graphs_before = kernels::cudnn_graph_cost_so_far();
        if (m_pr.type == kernels::elem::e4m3 && m_pr.backward) {
            // cuDNN's fp8 backward writes its gradients at scales measured by the call's
            // earlier runs (kernels/cudnn_fp8.hpp): two untimed passes, so every timed one
            // runs at current scaling's.
            phase_timer untimed;
            for (int run = 0; run < 2; ++run)
                iterate(untimed);
        }
    }

    void iterate(phase_timer& timer) override {
        // The inputs were written at setup: no compute of this iteration precedes them.
        m_scheme->forward(m_q.data(), m_kv.data(), m_o.data(), nullptr, timer);
        if (m_pr.backward)
            m_scheme->backward(m_q.data(), m_kv.data(), m_o.data(), m_do.data(), nullptr,
                               m_dq.data(), m_dkv.data(), timer);
    }

    validation validate() override {
        // Results come to the host and go over the host-memory control communicator.
        attention_result r;
        r.o = gathered(m_o, 0, m_pr.heads);
        if (m_pr.backward) {
            r.dq = gathered(m_dq, 0, m_pr.heads);
            r.dk = gathered(m_dkv, 0, m_pr.kv_heads);
            r.dv = gathered(m_dkv, kv_elems(), m_pr.kv_heads);
        }
        return validate_attention(m_control, m_pr, m_seed, r);
    }

    attr_map accuracy() override {
        // One more pass of the same inputs with the LSE in our buffer (the iterations leave it
        // inside the scheme), then the measurement: collective over the control world.
        kernels::dev_buffer<float> lse(m_dev, q_elems() / static_cast<std::size_t>(m_pr.head_dim));
        phase_timer untimed;
        m_scheme->forward(m_q.data(), m_kv.data(), m_o.data(), lse.data(), untimed);
        local_result mine;
        if (m_pr.backward) {
            m_scheme->backward(m_q.data(), m_kv.data(), m_o.data(), m_do.data(), lse.data(),
                               m_dq.data(), m_dkv.data(), untimed);
            mine.dq = m_dq.download();
            const std::vector<float> dkv = m_dkv.download();
            const auto split = dkv.begin() + static_cast<std::ptrdiff_t>(kv_elems());
            mine.dk.assign(dkv.begin(), split);
            mine.dv.assign(split, dkv.end());
        }
        mine.o = m_o.download();
        mine.lse = lse.download();
        return measure_accuracy(m_control, m_dev, m_pr, m_seed, m_sample, m_pos, m_shape.mask, mine)
            .attrs();
    }

    case_extras extras() const override {
        // cuDNN's graphs this case built (in its warm-up): a set-up cost, with the case.
        case_extras e;
        if (m_dev.kind() != device_kind::cuda ||
            kernels::attention_path() != kernels::attn_path::cudnn)
            return e;
        const kernels::cudnn_graph_cost now = kernels::cudnn_graph_cost_so_far();
        e.attrs[schema::attr::cudnn_graphs_built] =
            static_cast<std::int64_t>(now.builds - m_graphs_before.builds);
        e.attrs[schema::attr::cudnn_graph_build_s] = now.seconds - m_graphs_before.seconds;
        return e;
    }

  private:
    // --dtype fp8, current scaling: each of Q, K, V scaled by 448 / the amax of the global
    // tensor (this rank's shard's amax reduced over the ranks: collective), and the shape's
    // descales that cuDNN reads them with.
    void set_fp8_scales(const std::vector<std::int64_t>& mine) {
        attention_problem raw = m_pr;
        raw.type = kernels::elem::f32;
        std::array<float, 3> amax{};
        std::vector<float> host(q_elems());
        fill_shard(tensor_id::q, m_seed, raw, 0, m_pr.heads, mine, host.data());
        amax[0] = amax_of(host.data(), host.size());
        host.resize(kv_elems());
        for (const tensor_id id : {tensor_id::k, tensor_id::v}) {
            fill_shard(id, m_seed, raw, 0, m_pr.kv_heads, mine, host.data());
            amax[static_cast<std::size_t>(id)] = amax_of(host.data(), host.size());
        }
        m_pr.fp8_scale = fp8_current_scales(m_control, amax);
        if (m_pr.backward) { // dO's the same way (every rank has the same --pass: collective)
            host.resize(q_elems());
            fill_shard(tensor_id::d_out, m_seed, raw, 0, m_pr.heads, mine, host.data());
            m_pr.fp8_scale_do =
                fp8_current_scales(m_control, {amax_of(host.data(), host.size()), 0, 0})[0];
        }
        const kernels::attention_shape s = m_pr.local_shape(1);
        m_shape.descale_q = s.descale_q;
        m_shape.descale_k = s.descale_k;
        m_shape.descale_v = s.descale_v;
        m_shape.descale_do = s.descale_do;
    }
    std::size_t q_elems() const {
        return static_cast<std::size_t>(kernels::attention_q_elems(m_shape));
    }
    std::size_t kv_elems() const {
        return static_cast<std::size_t>(kernels::attention_kv_elems(m_shape));
    }
    // Collective over the control world: a local fp32 result, from `offset`, as a global
    // tensor of `heads` heads on the host.
    std::vector<float> gathered(const kernels::dev_buffer<float>& local, std::size_t offset,
                                std::int64_t heads) {
        const std::vector<float> host = local.download();
        return gather_global(m_control, m_pr, heads, host.data() + offset, m_pos);
    }

    attention_problem m_pr;
    std::uint64_t m_seed;
    std::int64_t m_sample; ///< --accuracy-sample
    int m_rank;
    comm::communicator& m_control;
    kernels::executor& m_dev;
    kernels::attention_shape m_shape;
    std::vector<std::vector<std::int64_t>> m_pos;
    std::unique_ptr<schemes::cp_attention> m_scheme;
    kernels::dev_mask m_mask;
    kernels::dev_buffer<unsigned char> m_q, m_kv, m_do; // m_pr.type
    kernels::dev_buffer<float> m_o, m_dq, m_dkv;        // [K | V] and [dK | dV] in one each
    kernels::cudnn_graph_cost m_graphs_before;
};

} // namespace

std::unique_ptr<case_runner> make_attention_case(const attention_problem& pr,
                                                 schemes::cp_config scheme, run_context& ctx) {
    return std::make_unique<attention_case>(pr, std::move(scheme), ctx);
}

} // namespace ringscale::jobs
