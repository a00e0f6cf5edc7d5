// Per-operation breakdown of a training step (train_step --profile on): host-clock seconds and
// call counts per operation of kernels/model/transformer, the optimizer and the exposed
// communication. Only meaningful where an operation has finished when its call returns (the
// CPU backend); the job refuses it on devices with asynchronous streams.
#pragma once

#include "src/base/clock.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace ringscale::kernels {

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

    /// RAII: times from construction to destruction into `k` of `p`; nothing when p is null.
    class scope {
      public:
        scope(op_profile* p, op_kind k) : m_p(p), m_k(k), m_start(p ? now_s() : 0) {}
        ~scope() {
            if (m_p)
                m_p->add(m_k, now_s() - m_start);
        }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

      private:
        op_profile* m_p;
        op_kind m_k;
        double m_start;
    };

  private:
    std::array<double, op_kinds> m_s{};
    std::array<std::int64_t, op_kinds> m_calls{};
};

} // namespace ringscale::kernels
