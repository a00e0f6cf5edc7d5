// FSDP: every unit's parameters (and gradients and AdamW states) are sharded over the
// group; a unit's parameters are all-gathered into one of two unit-sized buffers before its
// forward and again before its backward, and the buffer is reused ("freed") once the unit is
// done. Its local gradient goes to one of two scratch buffers and is reduce-scattered, non-
// blocking, as soon as the unit's backward is done. With prefetch the next unit's gather is
// posted before the current unit computes, so it overlaps.
#include "jobs/train_parallel.hpp"

#include <algorithm>

namespace ringscale::jobs {

using kernels::param_layout;

namespace {

class fsdp final : public dp_strategy {
  public:
    fsdp(const dp_settings& s, comm::communicator& group, const param_layout& layout)
        : m_hp(s.hp), m_prefetch(s.prefetch), m_group(group), m_layout(layout) {
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
            b->resize(at);
        for (int k = 0; k < 2; ++k) {
            m_gather[k].resize(biggest);
            m_gscratch[k].resize(biggest);
        }
    }

    const float* params(int u, bool backward, phase_timer& timer) override {
        int slot = 1 - m_slot_of_last;
        if (m_gather_req && m_gather_unit == u) { // prefetched
            auto wait = timer.time(phase::comm_wait);
            m_gather_req->wait();
            m_gather_req.reset();
            slot = m_gather_slot;
        } else {
            auto wait = timer.time(phase::comm_wait);
            m_group.all_gather(m_pshard.data() + m_shard_at[u], m_gather[slot].data(),
                               m_shard_size[u], comm::dtype::f32);
        }
        m_slot_of_last = slot;
        // Prefetch the unit computed next (the embedding's backward needs no parameters).
        const int next = backward ? u - 1 : u + 1;
        if (m_prefetch && next >= (backward ? 1 : 0) && next < m_layout.units()) {
            m_gather_unit = next;
            m_gather_slot = 1 - slot;
            m_gather_req = m_group.iall_gather(m_pshard.data() + m_shard_at[next],
                                               m_gather[m_gather_slot].data(), m_shard_size[next],
                                               comm::dtype::f32);
        }
        return m_gather[slot].data();
    }

    float* grads(int u) override {
        const int k = m_next_scratch;
        if (m_rs_req[k]) { // the scratch buffer's previous reduce-scatter must be finished
            auto wait = m_timer->time(phase::comm_wait);
            m_rs_req[k]->wait();
            m_rs_req[k].reset();
        }
        auto compute = m_timer->time(phase::compute);
        const std::size_t n = m_shard_size[u] * static_cast<std::size_t>(m_group.size());
        std::fill(m_gscratch[k].begin(), m_gscratch[k].begin() + n, 0.0f);
        return m_gscratch[k].data();
    }

    void done(int u, bool backward, phase_timer&) override {
        // MPI moves non-blocking collectives only inside MPI calls: poke those in flight.
        for (auto& r : m_rs_req)
            if (r)
                r->test();
        if (m_gather_req)
            m_gather_req->test();
        if (!backward)
            return;
        const int k = m_next_scratch;
        m_rs_req[k] =
            m_group.ireduce_scatter(m_gscratch[k].data(), m_gshard.data() + m_shard_at[u],
                                    m_shard_size[u], comm::dtype::f32, comm::reduce_op::sum);
        m_next_scratch = 1 - k;
    }

    void load(const float* full) override {
        const auto r = static_cast<std::size_t>(m_group.rank());
        std::fill(m_pshard.begin(), m_pshard.end(), 0.0f);
        for (int u = 0; u < m_layout.units(); ++u) {
            const auto& unit = m_layout.unit(u);
            const std::size_t lo = std::min(unit.size, r * m_shard_size[u]);
            const std::size_t hi = std::min(unit.size, lo + m_shard_size[u]);
            std::copy(full + unit.offset + lo, full + unit.offset + hi,
                      m_pshard.begin() + static_cast<std::ptrdiff_t>(m_shard_at[u]));
        }
        std::fill(m_m.begin(), m_m.end(), 0.0f);
        std::fill(m_v.begin(), m_v.end(), 0.0f);
    }

    void begin_step(phase_timer& timer) override { m_timer = &timer; }

    void finish_step(std::int64_t step, phase_timer& timer) override {
        {
            auto wait = timer.time(phase::comm_wait);
            for (auto& r : m_rs_req)
                if (r) {
                    r->wait();
                    r.reset();
                }
        }
        auto compute = timer.time(phase::compute);
        kernels::adamw_step(m_hp, step, m_pshard.size(), m_pshard.data(), m_gshard.data(),
                            m_m.data(), m_v.data());
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
    // Collective: shards of every unit -> the full flat buffer.
    void gather(const host_buffer<float>& shards, float* full) {
        for (int u = 0; u < m_layout.units(); ++u) {
            m_group.all_gather(shards.data() + m_shard_at[u], m_gather[0].data(), m_shard_size[u],
                               comm::dtype::f32);
            const auto& unit = m_layout.unit(u);
            std::copy(m_gather[0].begin(),
                      m_gather[0].begin() + static_cast<std::ptrdiff_t>(unit.size),
                      full + unit.offset);
        }
    }

    kernels::adamw_params m_hp;
    bool m_prefetch;
    comm::communicator& m_group;
    const param_layout& m_layout;
    std::vector<std::size_t> m_shard_size, m_shard_at;
    host_buffer<float> m_pshard, m_gshard, m_m, m_v, m_gather[2], m_gscratch[2];
    comm::request_ptr m_gather_req, m_rs_req[2];
    int m_gather_unit = -1, m_gather_slot = 0, m_slot_of_last = 1, m_next_scratch = 0;
    phase_timer* m_timer = nullptr;
};

} // namespace

std::unique_ptr<dp_strategy> make_fsdp(const dp_settings& s, comm::communicator& group,
                                       const param_layout& layout) {
    return std::make_unique<fsdp>(s, group, layout);
}

} // namespace ringscale::jobs
