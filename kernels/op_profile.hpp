// Per-operation breakdown of a training step (train_step --profile on): seconds and call
// counts per operation of kernels/model/transformer, the optimizer and the exposed
// communication. On the CPU, where an operation has finished when its call returns, each scope
// reads the host clock; on a GPU (set_device) each scope is a span of the device's event
// recorder (kernels/event_recorder.hpp), whose seconds arrive when the iteration is resolved.
#pragma once

#include "src/base/clock.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace ringscale::kernels {

class event_recorder;

/// The operations timed, in the order a step runs them (forward, backward, optimizer).
enum class op_kind : int {
    embedding_fwd,
    norm1_fwd,
    qkv_fwd,
    layout_fwd,
    attention_fwd,
    out_proj_fwd,
    residual_fwd,
    norm2_fwd,
    mlp_up_fwd,
    gelu_fwd,
    mlp_down_fwd,
    final_norm_fwd,
    logits_fwd,
    loss_fwd,
    loss_bwd,
    logits_bwd,
    final_norm_bwd,
    mlp_down_bwd,
    gelu_bwd,
    mlp_up_bwd,
    norm2_bwd,
    residual_bwd,
    out_proj_bwd,
    layout_bwd,
    attention_bwd,
    qkv_bwd,
    norm1_bwd,
    embedding_bwd,
    optimizer,
    communication,
    count
};

/// Number of op_kind values before `count`.
inline constexpr std::size_t op_kinds = static_cast<std::size_t>(op_kind::count);

/// Snake-case name of an operation ("qkv_fwd", "communication"...).
const char* op_name(op_kind k);

/// Seconds and calls per operation, accumulated over the steps it is attached to.
class op_profile {
  public:
    /// Add `seconds` and one call to `k`.
    void add(op_kind k, double seconds) {
        m_s[static_cast<std::size_t>(k)] += seconds;
        ++m_calls[static_cast<std::size_t>(k)];
    }
    double seconds(op_kind k) const { return m_s[static_cast<std::size_t>(k)]; }
    std::int64_t calls(op_kind k) const { return m_calls[static_cast<std::size_t>(k)]; }
    /// Sum of every operation's seconds.
    double total_s() const;
    /// Add one profiled step of `seconds` (host clock on the CPU, the device's span on a GPU).
    void add_step(double seconds) {
        m_step_s += seconds;
        ++m_steps;
    }
    double step_s() const { return m_step_s; }
    std::int64_t steps() const { return m_steps; }
    /// Count `n` spans a device's full event pool dropped (their time is not counted).
    void add_dropped(std::uint64_t n) { m_dropped += n; }
    std::uint64_t dropped() const { return m_dropped; }

    /// Where scopes time on a device: its event recorder (not owned); null (the default): the
    /// host clock.
    void set_device(event_recorder* r) { m_device = r; }
    event_recorder* device() const { return m_device; }
    /// With a device recorder: this profile takes the current iteration's spans (attach).
    void attach_to_device();

    /// RAII: times from construction to destruction into `k` of `p`; nothing when p is null.
    /// With a device recorder, a span on its compute stream (added when it is resolved).
    class scope {
      public:
        scope(op_profile* p, op_kind k) : m_p(p), m_k(k) {
            if (m_p)
                begin();
        }
        ~scope() {
            if (m_p)
                end();
        }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

      private:
        void begin();
        void end();
        op_profile* m_p;
        op_kind m_k;
        double m_start = 0;
        std::size_t m_span = 0;
    };

  private:
    std::array<double, op_kinds> m_s{};
    std::array<std::int64_t, op_kinds> m_calls{};
    double m_step_s = 0;
    std::int64_t m_steps = 0;
    std::uint64_t m_dropped = 0;
    event_recorder* m_device = nullptr;
};

} // namespace ringscale::kernels
