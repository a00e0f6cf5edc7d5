// DDP: full parameters and full local gradients on every rank; gradient buckets all-reduced
// as backward finishes them (overlapping the rest of the backward), AdamW on every element.
// On host memory the all-reduce is the scheme's own ring (jobs/schemes/ring_allreduce: Open
// MPI's non-blocking one sends every byte twice in turn below 4 ranks); on a device the
// communicator's (NCCL's, or staged MPI).
// The buckets (make_buckets, and ZeRO-1's make_shard_buckets) are defined here; ZeRO-1 itself
// is in zero1.cpp, FSDP in fsdp.cpp.
#include "jobs/schemes/data_parallel.hpp"
#include "jobs/train_faults.hpp"

#include "jobs/schemes/device_exchange.hpp"
#include "jobs/schemes/full_state.hpp"
#include "jobs/schemes/ring_allreduce.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::jobs::schemes {

using kernels::model::param_layout;

std::size_t padded(std::size_t n, int parts) {
    const auto p = static_cast<std::size_t>(parts);
    return (n + p - 1) / p * p;
}

std::vector<grad_bucket> make_buckets(const param_layout& layout, double bucket_bytes) {
    std::vector<grad_bucket> out;
    grad_bucket b;
    bool open = false;
    for (int u = layout.units() - 1; u >= 0; --u) {
        if (!open) {
            b = grad_bucket{u, u, layout.unit(u).offset, 0};
            open = true;
        }
        b.first_unit = u;
        b.offset = layout.unit(u).offset;
        b.size += layout.unit(u).size;
        if (static_cast<double>(b.size) * sizeof(float) >= bucket_bytes || u == 0) {
            out.push_back(b);
            open = false;
        }
    }
    return out;
}

std::vector<shard_bucket> make_shard_buckets(const param_layout& layout, double bucket_bytes,
                                             int ranks) {
    const auto p = static_cast<std::size_t>(ranks);
    std::vector<shard_bucket> out;
    std::size_t end = padded(layout.total(), ranks);
    for (const grad_bucket& b : make_buckets(layout, bucket_bytes)) {
        const std::size_t start = padded(b.offset, ranks);
        if (start < end)
            out.push_back({b.first_unit, start, end - start, 0});
        end = std::min(end, start);
    }
    std::size_t shard = 0;
    for (auto k = out.rbegin(); k != out.rend(); ++k) {
        k->shard_offset = shard;
        shard += k->size / p;
    }
    return out;
}

namespace {

using kernels::phase_scope;

constexpr int ring_tag_base = 100; // + bucket index; the cp schemes use tags 1-3 on their group

class ddp final : public full_state {
  public:
    ddp(const dp_settings& s, comm::communicator& group, const param_layout& layout,
        kernels::model::train_context& ctx)
        : full_state(layout, group, ctx, layout.total()), m_hp(s.hp),
          m_ring(group.memory() == comm::memory_space::host),
          m_buckets(make_buckets(layout, s.bucket_bytes)), m_reduced(m_dev, layout.total()) {
        m_m.allocate(m_dev, layout.total());
        m_v.allocate(m_dev, layout.total());
        progress_between_gemms([this] { move_pending(); });
    }
    // A bucket is complete when its lowest unit's backward is done: post its all-reduce now
    // so it travels while backward continues with the units below.
    void done(int u, bool backward, phase_timer& timer) override {
        if (!backward)
            return;
        // MPI moves non-blocking collectives only inside MPI calls: poke the ones in flight
        // between units (and, on the host, before every GEMM) so earlier buckets progress
        // while backward computes. (A staged MPI request that completes here lands in
        // m_reduced, which no compute reads before finish_step.)
        move_pending();
        for (const auto& b : m_buckets)
            if (b.first_unit == u) {
                // Posting may block the host (staged MPI waits for the gradient and copies
                // it out): time the compute stream's idleness meanwhile as communication.
                phase_scope post(m_dev, timer, phase::comm_wait);
                after_compute();
                if (active_faults().skip_bucket_allreduce && &b == &m_buckets.front() &&
                    m_group.size() > 1) { // planted defect: this bucket is never reduced
                    m_dev.copy(m_reduced.data() + b.offset, m_grads.data() + b.offset,
                               b.size * sizeof(float));
                    continue;
                }
                const float* g = m_grads.data() + b.offset;
                float* out = m_reduced.data() + b.offset;
                const int tag = ring_tag_base + static_cast<int>(&b - m_buckets.data());
                m_pending.push_back(traced_post(
                    m_group, m_dev, trace::kind::reduce,
                    static_cast<double>(b.size) * sizeof(float), [&] {
                        return m_ring ? ring_allreduce(m_group, g, out, b.size, tag)
                                      : m_group.iallreduce(g, out, b.size, comm::dtype::f32,
                                                           comm::reduce_op::sum);
                    }));
            }
    }
    void finish_step(std::int64_t step, phase_timer& timer) override {
        {
            const trace::scope named(trace::wait_context(trace::kind::reduce, 0));
            phase_scope wait(m_dev, timer, phase::comm_wait);
            comm::wait_all(m_pending);
        }
        const trace::scope optimizer(trace::layer_context(trace::kind::optimizer, -1));
        phase_scope compute(m_dev, timer, phase::compute);
        kernels::model::optimizer_step(m_ctx, m_hp, step, m_layout.total(), m_params.data(),
                                       m_reduced.data(), m_m.data(), m_v.data());
    }
    void gather_grads(float* full) override {
        const std::vector<float> g = m_reduced.download();
        std::copy(g.begin(), g.end(), full);
    }
    dp_memory memory() const override {
        const double n = static_cast<double>(m_layout.total()) * sizeof(float);
        return {n, n, 2 * n, n};
    }
    double comm_bytes_per_step() const override {
        return static_cast<double>(m_layout.total()) * sizeof(float);
    }

  private:
    void move_pending() {
        for (auto& r : m_pending)
            r->test();
    }

    kernels::adamw_params m_hp;
    bool m_ring; ///< host memory: the scheme's own ring all-reduce
    std::vector<grad_bucket> m_buckets;
    kernels::dev_buffer<float> m_reduced;
    std::vector<comm::request_ptr> m_pending;
};

} // namespace

std::unique_ptr<dp_strategy> make_fsdp(const dp_settings& s, comm::communicator& group,
                                       const param_layout& layout,
                                       kernels::model::train_context& ctx);
std::unique_ptr<dp_strategy> make_zero1(const dp_settings& s, comm::communicator& group,
                                        const param_layout& layout,
                                        kernels::model::train_context& ctx); // zero1.cpp

std::unique_ptr<dp_strategy> make_dp_strategy(const dp_settings& s, comm::communicator& group,
                                              const param_layout& layout,
                                              kernels::model::train_context& ctx) {
    if (s.variant == "ddp")
        return std::make_unique<ddp>(s, group, layout, ctx);
    if (s.variant == "zero1")
        return make_zero1(s, group, layout, ctx);
    if (s.variant == "fsdp")
        return make_fsdp(s, group, layout, ctx);
    throw config_error(fmt::format("--dp-variant: '{}' is not one of ddp, zero1, fsdp", s.variant));
}

double dp_state_bytes(const dp_settings& s, int ranks, const param_layout& layout) {
    const double f = sizeof(float);
    if (s.variant == "ddp")
        return 5.0 * layout.total() * f;
    if (s.variant == "zero1") {
        // params, grads, grad shard, m, v; the ring's scratch (2 pieces a bucket) past 2 ranks
        const double n = static_cast<double>(padded(layout.total(), ranks));
        return (2 * n + (ranks > 2 ? 5 : 3) * n / ranks) * f;
    }
    double shards = 0, biggest = 0; // fsdp
    for (int u = 0; u < layout.units(); ++u) {
        const double pu = static_cast<double>(padded(layout.unit(u).size, ranks));
        shards += pu / ranks;
        biggest = std::max(biggest, pu);
    }
    return (4 * shards + 4 * biggest) * f;
}

} // namespace ringscale::jobs::schemes
