// ZeRO-1: full parameters and full local gradients on every rank, AdamW states for its shard.
// The buckets of DDP (bounds rounded to multiples of P, make_shard_buckets) are reduce-scattered
// as the backward completes them, overlapping the rest of the backward. AdamW then updates
// the rank's piece of every bucket in place in the full parameters, and each bucket is
// all-gathered in place, posted without waiting: the bucket holding unit 0 first, as the next
// forward reads them. That forward waits, in params(u), only for the buckets covering unit u
// and tests the others after every unit, so the gathers travel while the first units compute.
// Whatever reads the full parameters outside a step (gather_params, load) waits for them first.
//
// On host memory the reduce-scatter is the scheme's own ring (jobs/schemes/ring_reduce_scatter:
// the same work on every rank); on a device the communicator's (NCCL's ring, or staged MPI).
#include "jobs/schemes/data_parallel.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "jobs/schemes/full_state.hpp"
#include "jobs/schemes/ring_reduce_scatter.hpp"

#include <algorithm>

namespace ringscale::jobs::schemes {

using kernels::phase_scope;
using kernels::model::param_layout;

namespace {

constexpr int ring_tag_base = 100; // + bucket index; the cp schemes use tags 1-3 on their group

class zero1 final : public full_state {
  public:
    zero1(const dp_settings& s, comm::communicator& group, const param_layout& layout,
          kernels::model::train_context& ctx)
        // The head bucket reduces the padding too.
        : full_state(layout, group, ctx, padded(layout.total(), group.size())), m_hp(s.hp),
          m_ring(group.memory() == comm::memory_space::host),
          m_buckets(make_shard_buckets(layout, s.bucket_bytes, group.size())) {
        const auto p = static_cast<std::size_t>(group.size());
        m_shard = m_params.size() / p;
        // On one rank the shard is the whole gradient: reduce-scattering it would copy it
        // into a second buffer of the same size for nothing.
        if (p > 1)
            m_gshard.allocate(m_dev, m_shard);
        if (m_ring && ring_scratch_floats(m_shard, group.size()) > 0)
            m_scratch.allocate(m_dev, ring_scratch_floats(m_shard, group.size()));
        m_m.allocate(m_dev, m_shard);
        m_v.allocate(m_dev, m_shard);
        progress_between_gemms([this] { move_in_flight(); });
    }

    const float* params(int u, bool, phase_timer& timer) override {
        const auto& unit = m_layout.unit(u);
        await_gathers(unit.offset, unit.offset + unit.size, timer);
        return m_params.data() + unit.offset;
    }
    float* grads(int u) override { return m_grads.data() + m_layout.unit(u).offset; }

    // Forward: move the gathers still in flight. Backward: a bucket is complete when its first
    // unit's backward is done; reduce-scatter it now so it travels while backward continues.
    void done(int u, bool backward, phase_timer& timer) override {
        move_in_flight();
        if (!backward || m_group.size() == 1)
            return;
        for (std::size_t k = 0; k < m_buckets.size(); ++k)
            if (m_buckets[k].first_unit == u)
                post_reduce(k, timer);
    }

    void finish_step(std::int64_t step, phase_timer& timer) override;

    void gather_grads(float* full) override {
        settle();
        kernels::dev_buffer<float> all(m_dev, m_params.size());
        after_compute();
        std::vector<comm::request_ptr> reqs;
        for (const shard_bucket& b : m_buckets)
            reqs.push_back(m_group.iall_gather(grad_shard() + b.shard_offset, all.data() + b.start,
                                               piece(b), comm::dtype::f32));
        comm::wait_all(reqs);
        const std::vector<float> g = all.download(m_layout.total());
        std::copy(g.begin(), g.end(), full);
    }
    dp_memory memory() const override {
        const double f = sizeof(float), n = static_cast<double>(m_params.size()) * f;
        const double shard = static_cast<double>(m_shard) * f;
        const double grad_shard_bytes = m_group.size() > 1 ? shard : 0; // P=1: the gradient
        return {n, n + grad_shard_bytes, 2 * shard, static_cast<double>(m_scratch.bytes())};
    }
    double comm_bytes_per_step() const override {
        return m_group.size() > 1 ? 2.0 * static_cast<double>(m_params.size()) * sizeof(float)
                                  : 0.0; // one rank sends nothing
    }

  private:
    struct pending_gather {
        std::size_t lo, hi; ///< the flat elements it writes
        comm::request_ptr req;
    };

    float* grad_shard() { return m_group.size() > 1 ? m_gshard.data() : m_grads.data(); }
    std::size_t piece(const shard_bucket& b) const {
        return b.size / static_cast<std::size_t>(m_group.size());
    }
    // This rank's piece of bucket `b` in the full parameters.
    float* mine(const shard_bucket& b) {
        return m_params.data() + b.start + piece(b) * static_cast<std::size_t>(m_group.rank());
    }
    void move_in_flight() { // MPI progresses inside MPI calls only
        for (auto& g : m_gathers)
            g.req->test();
        for (auto& r : m_reduces)
            r->test();
    }
    void post_reduce(std::size_t k, phase_timer& timer);
    void await_gathers(std::size_t lo, std::size_t hi, phase_timer& timer);
    void settle() override;

    kernels::adamw_params m_hp;
    bool m_ring; ///< host memory: the scheme's own ring reduce-scatter
    std::vector<shard_bucket> m_buckets;
    std::size_t m_shard = 0;
    kernels::dev_buffer<float> m_gshard, m_scratch;
    // Declared after the buffers they write (the base's among them): destroyed (so completed)
    // first.
    std::vector<comm::request_ptr> m_reduces;
    std::vector<pending_gather> m_gathers;
};

void zero1::post_reduce(std::size_t k, phase_timer& timer) {
    const shard_bucket& b = m_buckets[k];
    // Posting may block the host (staged MPI waits for the gradient and copies it out): time
    // the compute stream's idleness meanwhile as communication.
    phase_scope post(m_dev, timer, phase::comm_wait);
    after_compute();
    float* out = m_gshard.data() + b.shard_offset;
    if (m_ring) { // buckets in flight together each have their own tag and scratch
        const std::size_t scratch = ring_scratch_floats(piece(b), m_group.size());
        float* s = scratch ? m_scratch.data() + 2 * b.shard_offset : nullptr;
        m_reduces.push_back(ring_reduce_scatter(m_group, m_grads.data() + b.start, out, piece(b), s,
                                                ring_tag_base + static_cast<int>(k)));
    } else {
        m_reduces.push_back(m_group.ireduce_scatter(m_grads.data() + b.start, out, piece(b),
                                                    comm::dtype::f32, comm::reduce_op::sum));
    }
}

void zero1::finish_step(std::int64_t step, phase_timer& timer) {
    {
        phase_scope wait(m_dev, timer, phase::comm_wait);
        comm::wait_all(m_reduces);
    }
    // The bucket holding unit 0 (the last one backward completed) first: the next forward
    // reads it first. Each bucket's gather is posted as soon as its piece is updated, in
    // place (the piece is this rank's block of the gather's output).
    for (auto b = m_buckets.rbegin(); b != m_buckets.rend(); ++b) {
        {
            phase_scope compute(m_dev, timer, phase::compute);
            kernels::model::optimizer_step(
                m_ctx, m_hp, step, piece(*b), mine(*b), grad_shard() + b->shard_offset,
                m_m.data() + b->shard_offset, m_v.data() + b->shard_offset);
        }
        if (m_group.size() == 1)
            continue; // the piece is the whole bucket
        phase_scope post(m_dev, timer, phase::comm_wait);
        after_compute();
        for (auto& g : m_gathers)
            g.req->test();
        m_gathers.push_back({b->start, b->start + b->size,
                             m_group.iall_gather(mine(*b), m_params.data() + b->start, piece(*b),
                                                 comm::dtype::f32)});
    }
}

// Wait for the gathers writing any of the flat elements [lo, hi) (exposed communication).
void zero1::await_gathers(std::size_t lo, std::size_t hi, phase_timer& timer) {
    if (m_gathers.empty())
        return;
    phase_scope wait(m_dev, timer, phase::comm_wait);
    for (auto& g : m_gathers)
        if (g.lo < hi && lo < g.hi)
            g.req->wait();
    m_gathers.erase(std::remove_if(m_gathers.begin(), m_gathers.end(),
                                   [](pending_gather& g) { return g.req->test(); }),
                    m_gathers.end());
}

// Complete every collective in flight (outside a step: untimed).
void zero1::settle() {
    comm::wait_all(m_reduces);
    for (auto& g : m_gathers)
        g.req->wait();
    m_gathers.clear();
}

} // namespace

std::unique_ptr<dp_strategy> make_zero1(const dp_settings& s, comm::communicator& group,
                                        const param_layout& layout,
                                        kernels::model::train_context& ctx) {
    return std::make_unique<zero1>(s, group, layout, ctx);
}

} // namespace ringscale::jobs::schemes
