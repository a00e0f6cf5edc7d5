// The CPU backend's attention blocks and data movement (kernels/kernels.inc): the fast fp32
// attention kernels (attention_cpu) on the executor's workspace, called once, or once per
// (batch, kv-head group) with the caller's MPI progress between the pieces.
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/backend.hpp"
#include "kernels/cpu/executor.hpp"
#include "kernels/parallel.hpp"
#include "src/base/error.hpp"

#include <cstring>
#include <fmt/format.h>

namespace ringscale::kernels::cpu {

namespace {

void require_f32(elem e) {
    if (e != elem::f32)
        throw config_error(
            fmt::format("the CPU attention kernels compute in fp32, not {}", elem_short_name(e)));
}

// f(one, q_row, k_row) for each (batch, kv-head group): its shape and first rows; `progress`
// (when set) runs after each group.
template <class F>
void per_group(const attention_shape& s, F&& f, const progress_fn& progress) {
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

// f(shape, q_row, k_row) over the whole problem, as `split` says.
template <class F>
void in_pieces(const attention_shape& s, F&& f, attention_split split,
               const progress_fn& progress) {
    if (split == attention_split::per_group)
        per_group(s, f, progress);
    else
        f(s, 0, 0);
}

} // namespace

bool attention_supports(executor&, elem e) {
    return e == elem::f32;
}

void attention_fwd_init(executor&, const attention_shape& s, float* o, float* lse) {
    attention_fwd_init(s, o, lse);
}

void attention_fwd(executor& exec, const attention_shape& s, elem e, const void* q, const void* k,
                   const void* v, const row_positions& qp, const row_positions& kp, float* o,
                   float* lse, attention_split split, const progress_fn& progress) {
    require_f32(e);
    attention_workspace& ws = as_cpu(exec).workspace();
    attention_workspace_reserve(ws);
    const std::int64_t d = s.head_dim;
    const auto* qf = static_cast<const float*>(q);
    const auto* kf = static_cast<const float*>(k);
    const auto* vf = static_cast<const float*>(v);
    in_pieces(
        s,
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            attention_fwd_cpu(one, qf + q_row * d, kf + k_row * d, vf + k_row * d, qp.host, kp.host,
                              o + q_row * d, lse + q_row, ws);
        },
        split, progress);
}

void attention_bwd_delta(executor&, const attention_shape& s, elem e, const float* o,
                         const void* d_o, float* delta) {
    require_f32(e);
    attention_bwd_delta(s, o, static_cast<const float*>(d_o), delta);
}

void attention_bwd(executor& exec, const attention_shape& s, elem e, const void* q, const void* k,
                   const void* v, const void* d_o, const float* lse, const float* delta,
                   const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                   float* dv, attention_split split, const progress_fn& progress) {
    require_f32(e);
    attention_workspace& ws = as_cpu(exec).workspace();
    attention_workspace_reserve(ws);
    const std::int64_t d = s.head_dim;
    const auto* qf = static_cast<const float*>(q);
    const auto* kf = static_cast<const float*>(k);
    const auto* vf = static_cast<const float*>(v);
    const auto* dof = static_cast<const float*>(d_o);
    in_pieces(
        s,
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            attention_bwd_cpu(one, qf + q_row * d, kf + k_row * d, vf + k_row * d, dof + q_row * d,
                              lse + q_row, delta + q_row, qp.host, kp.host, dq + q_row * d,
                              dk + k_row * d, dv + k_row * d, ws);
        },
        split, progress);
}

void take_rows(executor&, std::size_t row_bytes, std::int64_t outer, std::int64_t src_rows,
               const row_positions& index, const void* src, void* dst) {
    const auto* in = static_cast<const unsigned char*>(src);
    auto* out = static_cast<unsigned char*>(dst);
    const std::int64_t n = index.count;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t t = 0; t < n; ++t)
            std::memcpy(out + (o * n + t) * row_bytes,
                        in + (o * src_rows + index.host[t]) * row_bytes, row_bytes);
}

void put_rows(executor&, std::size_t row_bytes, std::int64_t outer, std::int64_t dst_rows,
              const row_positions& index, const void* src, void* dst) {
    const auto* in = static_cast<const unsigned char*>(src);
    auto* out = static_cast<unsigned char*>(dst);
    const std::int64_t n = index.count;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t t = 0; t < n; ++t)
            std::memcpy(out + (o * dst_rows + index.host[t]) * row_bytes,
                        in + (o * n + t) * row_bytes, row_bytes);
}

void convert(executor& exec, elem e, std::size_t n, const float* src, void* dst) {
    require_f32(e);
    exec.copy(dst, src, n * sizeof(float));
}

void add(executor&, std::size_t n, const float* a, const float* b, float* out) {
    parallel_for(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
            out[i] = a[i] + b[i];
    });
}

} // namespace ringscale::kernels::cpu
