// FSDP: every unit's parameters (and gradients and AdamW states) are sharded over the
// group; a unit's parameters are all-gathered into one of two unit-sized buffers before its
// forward and again before its backward, and the buffer is reused ("freed") once the unit is
// done. Its local gradient goes to one of two scratch buffers and is reduce-scattered, non-
// blocking, as soon as the unit's backward is done. With prefetch the next unit's gather is
// posted before the current unit computes, so it overlaps.
#include "jobs/schemes/data_parallel.hpp"

#include "jobs/schemes/device_exchange.hpp"

#include <algorithm>

namespace ringscale::jobs::schemes {

using kernels::phase_scope;
using kernels::model::param_layout;

namespace {

class fsdp final : public dp_strategy {
  public:
    fsdp(const dp_settings& s, comm::communicator& group, const param_layout& layout,
         kernels::model::train_context& ctx)
        : m_hp(s.hp), m_prefetch(s.prefetch), m_group(group), m_layout(layout), m_ctx(ctx),
          m_dev(ctx.exec()) {
        const int p = group.size();
        std::size_t at = 0, biggest = 0;
        for (int u = 0; u < layout.units(); ++u) {
            const std::size_t pu = padded(layout.unit(u).size, p);
            m_shard_size.push_back(pu / static_cast<std::size_t>(p));
            m_shard_at.push_back(at);
            at += pu / static_cast<std::size_t>(p);
            biggest = std::max(biggest, pu);
        }
        for (auto* b : {&m_pshard, &m_gshard, &m_m, &m_v})
            b->allocate(m_dev, at);
        m_dev.zero(m_gshard.data(), m_gshard.bytes());
        for (int k = 0; k < 2; ++k) {
            m_gather[k].allocate(m_dev, biggest);
            m_gscratch[k].allocate(m_dev, biggest);
        }
        if (group.memory() == comm::memory_space::host) // MPI on the CPU: see train_context
            m_ctx.set_progress(this, [this] { move_in_flight(); });
    }
    ~fsdp() override { m_ctx.clear_progress(this); }

    const float* params(int u, bool backward, phase_timer& timer) override {
        int slot = 1 - m_slot_of_last;
        if (m_gather_req && m_gather_unit == u) { // prefetched
            phase_scope wait(m_dev, timer, phase::comm_wait);
            m_gather_req->wait();
            m_gather_req.reset();
            slot = m_gather_slot;
        } else {
            // The gather overwrites the slot the unit before last read: after that compute.
            after_compute();
            phase_scope wait(m_dev, timer, phase::comm_wait);
            m_group.all_gather(m_pshard.data() + m_shard_at[u], m_gather[slot].data(),
                               m_shard_size[u], comm::dtype::f32);
        }
        m_slot_of_last = slot;
        // Prefetch the unit computed next (the embedding's backward needs no parameters).
        const int next = backward ? u - 1 : u + 1;
        if (m_prefetch && next >= (backward ? 1 : 0) && next < m_layout.units()) {
            m_gather_unit = next;
            m_gather_slot = 1 - slot;
            phase_scope post(m_dev, timer, phase::comm_wait);
            after_compute(); // the previous unit read that slot
            m_gather_req = m_group.iall_gather(m_pshard.data() + m_shard_at[next],
                                               m_gather[m_gather_slot].data(), m_shard_size[next],
                                               comm::dtype::f32);
        }
        return m_gather[slot].data();
    }

    float* grads(int u) override {
        const int k = m_next_scratch;
        if (m_rs_req[k]) { // the scratch buffer's previous reduce-scatter must be finished
            phase_scope wait(m_dev, *m_timer, phase::comm_wait);
            m_rs_req[k]->wait();
            m_rs_req[k].reset();
        }
        phase_scope compute(m_dev, *m_timer, phase::compute);
        const std::size_t n = m_shard_size[u] * static_cast<std::size_t>(m_group.size());
        m_dev.zero(m_gscratch[k].data(), n * sizeof(float));
        return m_gscratch[k].data();
    }

    void done(int u, bool backward, phase_timer& timer) override {
        move_in_flight();
        if (!backward)
            return;
        const int k = m_next_scratch;
        phase_scope post(m_dev, timer, phase::comm_wait); // staged MPI blocks the host here
        after_compute();                                  // the unit's gradient
        m_rs_req[k] =
            m_group.ireduce_scatter(m_gscratch[k].data(), m_gshard.data() + m_shard_at[u],
                                    m_shard_size[u], comm::dtype::f32, comm::reduce_op::sum);
        m_next_scratch = 1 - k;
    }

    void load(const float* full) override {
        const auto r = static_cast<std::size_t>(m_group.rank());
        std::vector<float> mine(m_pshard.size(), 0.0f);
        for (int u = 0; u < m_layout.units(); ++u) {
            const auto& unit = m_layout.unit(u);
            const std::size_t lo = std::min(unit.size, r * m_shard_size[u]);
            const std::size_t hi = std::min(unit.size, lo + m_shard_size[u]);
            std::copy(full + unit.offset + lo, full + unit.offset + hi,
                      mine.begin() + static_cast<std::ptrdiff_t>(m_shard_at[u]));
        }
        m_pshard.upload(mine.data(), mine.size());
        m_dev.zero(m_m.data(), m_m.bytes());
        m_dev.zero(m_v.data(), m_v.bytes());
    }

    void begin_step(phase_timer& timer) override { m_timer = &timer; }

    void finish_step(std::int64_t step, phase_timer& timer) override {
        {
            phase_scope wait(m_dev, timer, phase::comm_wait);
            for (auto& r : m_rs_req)
                if (r) {
                    r->wait();
                    r.reset();
                }
        }
        phase_scope compute(m_dev, timer, phase::compute);
        kernels::model::optimizer_step(m_ctx, m_hp, step, m_pshard.size(), m_pshard.data(),
                                       m_gshard.data(), m_m.data(), m_v.data());
    }

    void gather_params(float* full) override { gather(m_pshard, full); }
    void gather_grads(float* full) override { gather(m_gshard, full); }

    dp_memory memory() const override {
        const double f = sizeof(float), shards = static_cast<double>(m_pshard.size()) * f;
        const double unit = static_cast<double>(m_gather[0].size()) * f;
        return {shards, shards, 2 * shards, 4 * unit};
    }
    double comm_bytes_per_step() const override {
        // Every unit gathered for forward and (but the embedding) for backward; every
        // unit's gradient reduce-scattered.
        double elems = 0;
        for (int u = 0; u < m_layout.units(); ++u)
            elems += static_cast<double>(m_shard_size[u]) * m_group.size() * (u == 0 ? 2 : 3);
        return elems * sizeof(float);
    }

  private:
    // MPI moves non-blocking collectives only inside MPI calls: poke those in flight.
    void move_in_flight() {
        for (auto& r : m_rs_req)
            if (r)
                r->test();
        if (m_gather_req)
            m_gather_req->test();
    }
    // Collective: shards of every unit -> the full flat buffer in host memory.
    void gather(const kernels::dev_buffer<float>& shards, float* full) {
        for (int u = 0; u < m_layout.units(); ++u) {
            after_compute();
            m_group.all_gather(shards.data() + m_shard_at[u], m_gather[0].data(), m_shard_size[u],
                               comm::dtype::f32);
            const auto& unit = m_layout.unit(u);
            const std::vector<float> got = m_gather[0].download(unit.size);
            std::copy(got.begin(), got.end(), full + unit.offset);
        }
    }
    // The next communication reads or overwrites what the compute enqueued so far touches.
    void after_compute() { order_comm_after(m_group, m_dev, m_dev.record()); }

    kernels::adamw_params m_hp;
    bool m_prefetch;
    comm::communicator& m_group;
    const param_layout& m_layout;
    kernels::model::train_context& m_ctx;
    kernels::executor& m_dev;
    std::vector<std::size_t> m_shard_size, m_shard_at;
    kernels::dev_buffer<float> m_pshard, m_gshard, m_m, m_v, m_gather[2], m_gscratch[2];
    comm::request_ptr m_gather_req, m_rs_req[2];
    int m_gather_unit = -1, m_gather_slot = 0, m_slot_of_last = 1, m_next_scratch = 0;
    phase_timer* m_timer = nullptr;
};

} // namespace

std::unique_ptr<dp_strategy> make_fsdp(const dp_settings& s, comm::communicator& group,
                                       const param_layout& layout,
                                       kernels::model::train_context& ctx) {
    return std::make_unique<fsdp>(s, group, layout, ctx);
}

} // namespace ringscale::jobs::schemes
