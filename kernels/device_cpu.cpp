// The CPU device: tracked host memory, every call synchronous, phases on the host clock, the
// fast fp32 attention kernels (kernels/attention_cpu) called once per (batch, kv-head group)
// so a caller's progress function can keep MPI moving between the pieces.
#include "kernels/attention_cpu.hpp"
#include "kernels/dev_buffer.hpp"
#include "src/base/error.hpp"
#include "src/base/memory.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace ringscale::kernels {

void throw_dev_buffer_overflow(std::size_t count, std::size_t size) {
    throw config_error(
        fmt::format("dev_buffer: a copy of {} elements exceeds its {} elements", count, size));
}

dev_positions::dev_positions(device& dev, std::vector<std::int64_t> host)
    : m_host(std::move(host)), m_dev(dev, m_host) {
    m_contiguous = true;
    for (std::size_t i = 1; i < m_host.size(); ++i)
        m_contiguous = m_contiguous && m_host[i] == m_host[0] + static_cast<std::int64_t>(i);
}

row_positions dev_positions::view() const {
    return {m_host.data(), m_dev.data(), static_cast<std::int64_t>(m_host.size()), m_contiguous};
}

namespace {

class cpu_device final : public device {
  public:
    std::string name() const override { return "cpu"; }
    bool supports(elem e) const override { return e == elem::f32; }

    void* allocate(std::size_t bytes) override { return bytes ? tracked_alloc(bytes) : nullptr; }
    void release(void* ptr, std::size_t bytes) noexcept override {
        if (ptr)
            tracked_free(ptr, bytes);
    }
    void upload(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
    void download(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
    void copy(void* dst, const void* src, std::size_t bytes) override {
        if (bytes)
            std::memmove(dst, src, bytes);
    }
    void zero(void* dst, std::size_t bytes) override {
        if (bytes)
            std::memset(dst, 0, bytes);
    }
    void convert(elem e, std::size_t n, const float* src, void* dst) override {
        require_f32(e);
        copy(dst, src, n * sizeof(float));
    }
    void add(std::size_t n, const float* a, const float* b, float* out) override {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = a[i] + b[i];
    }
    std::uint64_t device_peak_bytes() const override { return 0; }
    void reset_device_peak() override {}

    void* stream() const override { return nullptr; }
    void synchronize() override {}
    mark record() override { return {}; }
    void host_wait(const mark&) override {}
    void stream_wait(void*, const mark&) override {}
    std::size_t begin_phase() override {
        const double t = now_s();
        std::size_t token = 0;
        std::memcpy(&token, &t, sizeof token);
        return token;
    }
    void end_phase(phase_timer& timer, phase p, std::size_t token) override {
        double start = 0;
        std::memcpy(&start, &token, sizeof start);
        timer.add(p, now_s() - start);
    }
    void finish_iteration(phase_timer&) override {}

    void attention_fwd_init(const attention_shape& s, float* o, float* lse) override {
        kernels::attention_fwd_init(s, o, lse);
    }
    void attention_fwd(const attention_shape& s, elem e, const void* q, const void* k,
                       const void* v, const row_positions& qp, const row_positions& kp, float* o,
                       float* lse, const progress_fn& progress) override;
    void attention_bwd_delta(const attention_shape& s, elem e, const float* o, const void* d_o,
                             float* delta) override {
        require_f32(e);
        kernels::attention_bwd_delta(s, o, static_cast<const float*>(d_o), delta);
    }
    void attention_bwd(const attention_shape& s, elem e, const void* q, const void* k,
                       const void* v, const void* d_o, const float* lse, const float* delta,
                       const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                       float* dv, const progress_fn& progress) override;

    void take_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t src_rows,
                   const row_positions& index, const void* src, void* dst) override {
        const auto* in = static_cast<const unsigned char*>(src);
        auto* out = static_cast<unsigned char*>(dst);
        const std::int64_t n = index.count;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t t = 0; t < n; ++t)
                std::memcpy(out + (o * n + t) * row_bytes,
                            in + (o * src_rows + index.host[t]) * row_bytes, row_bytes);
    }
    void put_rows(std::size_t row_bytes, std::int64_t outer, std::int64_t dst_rows,
                  const row_positions& index, const void* src, void* dst) override {
        const auto* in = static_cast<const unsigned char*>(src);
        auto* out = static_cast<unsigned char*>(dst);
        const std::int64_t n = index.count;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t t = 0; t < n; ++t)
                std::memcpy(out + (o * dst_rows + index.host[t]) * row_bytes,
                            in + (o * n + t) * row_bytes, row_bytes);
    }

  private:
    static void require_f32(elem e) {
        if (e != elem::f32)
            throw config_error(fmt::format("the CPU attention kernels compute in fp32, not {}",
                                           elem_short_name(e)));
    }
    // f(one, q_row, k_row) for each (batch, kv-head group): its shape and first rows.
    template <class F>
    void per_group(const attention_shape& s, F&& f, const progress_fn& progress);

    attention_workspace m_ws;
};

template <class F>
void cpu_device::per_group(const attention_shape& s, F&& f, const progress_fn& progress) {
    attention_workspace_reserve(m_ws);
    const std::int64_t g = s.heads / s.kv_heads;
    attention_shape one = s;
    one.batch = 1;
    one.heads = g;
    one.kv_heads = 1;
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t kvh = 0; kvh < s.kv_heads; ++kvh) {
            f(one, (b * s.heads + kvh * g) * s.q_len, (b * s.kv_heads + kvh) * s.k_len);
            if (progress)
                progress();
        }
}

void cpu_device::attention_fwd(const attention_shape& s, elem e, const void* q, const void* k,
                               const void* v, const row_positions& qp, const row_positions& kp,
                               float* o, float* lse, const progress_fn& progress) {
    require_f32(e);
    const std::int64_t d = s.head_dim;
    const auto* qf = static_cast<const float*>(q);
    const auto* kf = static_cast<const float*>(k);
    const auto* vf = static_cast<const float*>(v);
    per_group(
        s,
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            attention_fwd_cpu(one, qf + q_row * d, kf + k_row * d, vf + k_row * d, qp.host, kp.host,
                              o + q_row * d, lse + q_row, m_ws);
        },
        progress);
}

void cpu_device::attention_bwd(const attention_shape& s, elem e, const void* q, const void* k,
                               const void* v, const void* d_o, const float* lse, const float* delta,
                               const row_positions& qp, const row_positions& kp, float* dq,
                               float* dk, float* dv, const progress_fn& progress) {
    require_f32(e);
    const std::int64_t d = s.head_dim;
    const auto* qf = static_cast<const float*>(q);
    const auto* kf = static_cast<const float*>(k);
    const auto* vf = static_cast<const float*>(v);
    const auto* dof = static_cast<const float*>(d_o);
    per_group(
        s,
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            attention_bwd_cpu(one, qf + q_row * d, kf + k_row * d, vf + k_row * d, dof + q_row * d,
                              lse + q_row, delta + q_row, qp.host, kp.host, dq + q_row * d,
                              dk + k_row * d, dv + k_row * d, m_ws);
        },
        progress);
}

} // namespace

std::unique_ptr<device> make_cpu_device() {
    return std::make_unique<cpu_device>();
}

} // namespace ringscale::kernels
