// The CPU backend's attention blocks and data movement (kernels/kernels.inc): the fast fp32
// attention kernels (attention_cpu) on the executor's workspace, called once, or once per
// piece of kv-head groups (as many as the rank's threads) with the caller's MPI progress
// between the pieces. bf16 and fp16
// are emulated: their 2-byte elements (as a GPU stores them) are widened to fp32 per piece
// and the kernels round P and dS where the CUDA kernels do (attention_cpu.hpp).
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/backend.hpp"
#include "kernels/cpu/executor.hpp"
#include "kernels/parallel.hpp"
#include "kernels/threads.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <cstring>

namespace ringscale::kernels::cpu {

namespace {

/// `n` elements of type `e` at `src` as fp32: src itself for f32, else widened into `into`.
const float* widened(elem e, const void* src, std::size_t n, host_buffer<float>& into) {
    if (e == elem::e4m3) // its values are stored scaled: only cuDNN's fp8 graph reads them
        throw config_error("fp8 attention runs on cuDNN only (--device cuda --attn-kernel cudnn)");
    if (e == elem::f32)
        return static_cast<const float*>(src);
    if (into.size() < n)
        into.resize(n);
    elem_decode(e, src, into.data(), n);
    return into.data();
}

/// An element offset into an array of `e` elements.
const void* at(elem e, const void* base, std::int64_t elems) {
    return static_cast<const unsigned char*>(base) +
           elems * static_cast<std::int64_t>(elem_bytes(e));
}

// f(one, q_row, k_row) for each piece of up to `span` consecutive kv-head groups of one batch
// entry: its shape and first rows; `progress` (when set) runs after each piece. A piece spans
// as many groups as the call has threads, since the backward's items are the groups (one
// group per piece would leave every thread but one idle).
template <class F>
void per_group(const attention_shape& s, std::int64_t span, F&& f, const progress_fn& progress) {
    const std::int64_t g = s.heads / s.kv_heads;
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t kvh = 0; kvh < s.kv_heads; kvh += span) {
            attention_shape one = s;
            one.batch = 1;
            one.kv_heads = std::min(span, s.kv_heads - kvh);
            one.heads = g * one.kv_heads;
            f(one, (b * s.heads + kvh * g) * s.q_len, (b * s.kv_heads + kvh) * s.k_len);
            if (progress)
                progress();
        }
}

// f(shape, q_row, k_row) over the whole problem, as `split` says, on `ws`'s threads.
template <class F>
void in_pieces(const attention_shape& s, const attention_workspace& ws, F&& f,
               attention_split split, const progress_fn& progress) {
    if (split == attention_split::per_group)
        per_group(s, std::max(1, std::min(ws.m_workers, blas_threads())), f, progress);
    else
        f(s, 0, 0);
}

} // namespace

bool attention_supports(executor&, elem e) {
    return e != elem::e4m3; // fp32, and bf16/fp16 emulated
}

void attention_fwd_init(executor&, const attention_shape& s, float* o, float* lse) {
    attention_fwd_init(s, o, lse);
}

void attention_fwd(executor& exec, const attention_shape& s, elem e, const void* q, const void* k,
                   const void* v, const row_positions& qp, const row_positions& kp, float* o,
                   float* lse, attention_split split, const progress_fn& progress) {
    attention_workspace& ws = as_cpu(exec).workspace();
    attention_workspace_reserve(ws);
    const std::int64_t d = s.head_dim;
    in_pieces(
        s, ws,
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            const auto qn = static_cast<std::size_t>(attention_q_elems(one));
            const auto kn = static_cast<std::size_t>(attention_kv_elems(one));
            const float* qf = widened(e, at(e, q, q_row * d), qn, ws.m_wide[0]);
            const float* kf = widened(e, at(e, k, k_row * d), kn, ws.m_wide[1]);
            const float* vf = widened(e, at(e, v, k_row * d), kn, ws.m_wide[2]);
            attention_fwd_cpu(one, qf, kf, vf, qp.host, kp.host, o + q_row * d, lse + q_row, ws, e);
        },
        split, progress);
}

void attention_bwd_delta(executor& exec, const attention_shape& s, elem e, const float* o,
                         const void* d_o, float* delta) {
    attention_workspace& ws = as_cpu(exec).workspace();
    const auto n = static_cast<std::size_t>(attention_q_elems(s));
    attention_bwd_delta(s, o, widened(e, d_o, n, ws.m_wide[3]), delta, e);
}

void attention_bwd(executor& exec, const attention_shape& s, elem e, const void* q, const void* k,
                   const void* v, const void* d_o, const float* lse, const float* delta,
                   const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                   float* dv, attention_split split, const progress_fn& progress) {
    attention_workspace& ws = as_cpu(exec).workspace();
    attention_workspace_reserve(ws);
    const std::int64_t d = s.head_dim;
    in_pieces(
        s, ws,
        [&](const attention_shape& one, std::int64_t q_row, std::int64_t k_row) {
            const auto qn = static_cast<std::size_t>(attention_q_elems(one));
            const auto kn = static_cast<std::size_t>(attention_kv_elems(one));
            const float* qf = widened(e, at(e, q, q_row * d), qn, ws.m_wide[0]);
            const float* kf = widened(e, at(e, k, k_row * d), kn, ws.m_wide[1]);
            const float* vf = widened(e, at(e, v, k_row * d), kn, ws.m_wide[2]);
            const float* dof = widened(e, at(e, d_o, q_row * d), qn, ws.m_wide[3]);
            attention_bwd_cpu(one, qf, kf, vf, dof, lse + q_row, delta + q_row, qp.host, kp.host,
                              dq + q_row * d, dk + k_row * d, dv + k_row * d, ws, e);
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

void convert(executor&, elem e, std::size_t n, const float* src, void* dst) {
    elem_encode(e, src, dst, n);
}

void round_values(executor&, elem e, std::size_t n, float* x) {
    if (e == elem::f32)
        return;
    parallel_for(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
            x[i] = round_to(e, x[i]);
    });
}

void add(executor&, std::size_t n, const float* a, const float* b, float* out) {
    parallel_for(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
            out[i] = a[i] + b[i];
    });
}

} // namespace ringscale::kernels::cpu
