// The state DDP and ZeRO-1 share (jobs/schemes/ddp.cpp, zero1.cpp): full parameters and full
// local gradients on every rank, the AdamW moments (sized by the scheme), loading, clearing
// the gradients and reading the parameters back. A scheme with collectives still in flight
// outside a step (ZeRO-1's deferred gathers) completes them in settle(), which load() and
// gather_params() call first. Internal to the data-parallel schemes.
#pragma once

#include "jobs/schemes/data_parallel.hpp"
#include "jobs/schemes/device_exchange.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace ringscale::jobs::schemes {

class full_state : public dp_strategy {
  public:
    /// Parameters and gradients of `n` >= layout.total() elements (the rest padding).
    full_state(const kernels::model::param_layout& layout, comm::communicator& group,
               kernels::model::train_context& ctx, std::size_t n)
        : m_layout(layout), m_group(group), m_ctx(ctx), m_dev(ctx.exec()), m_params(m_dev, n),
          m_grads(m_dev, n) {}
    ~full_state() override { m_ctx.clear_progress(this); }
    const float* params(int u, bool, phase_timer&) override {
        return m_params.data() + m_layout.unit(u).offset;
    }
    float* grads(int u) override { return m_grads.data() + m_layout.unit(u).offset; }
    void load(const float* full) override {
        settle();
        m_dev.zero(m_params.data(), m_params.bytes()); // the padding, if any
        m_params.upload(full, m_layout.total());
        m_dev.zero(m_m.data(), m_m.bytes());
        m_dev.zero(m_v.data(), m_v.bytes());
    }
    void begin_step(phase_timer& timer) override {
        kernels::phase_scope compute(m_dev, timer, phase::compute);
        m_dev.zero(m_grads.data(), m_grads.bytes());
    }
    void gather_params(float* full) override {
        settle();
        const std::vector<float> p = m_params.download(m_layout.total());
        std::copy(p.begin(), p.end(), full);
    }

  protected:
    /// On host memory (MPI on the CPU), `move` runs before every dense layer's GEMMs: the
    /// collectives in flight advance every few tens of ms of compute, not only between units
    /// (a layer's backward). A device's collectives progress without the host.
    void progress_between_gemms(std::function<void()> move) {
        if (m_group.memory() == comm::memory_space::host)
            m_ctx.set_progress(this, std::move(move));
    }
    /// Complete the collectives still writing the parameters (none by default).
    virtual void settle() {}
    // The next communication reads what the compute enqueued so far produced.
    void after_compute() { order_comm_after(m_group, m_dev, m_dev.record()); }

    const kernels::model::param_layout& m_layout;
    comm::communicator& m_group;
    kernels::model::train_context& m_ctx;
    kernels::executor& m_dev;
    kernels::dev_buffer<float> m_params, m_grads, m_m, m_v;
};

} // namespace ringscale::jobs::schemes
