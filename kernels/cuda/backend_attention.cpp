// The CUDA backend's attention blocks and data movement (kernels/kernels.inc): the
// tensor-core attention kernels (attention_fwd.cuh, attention_bwd.cuh) and the row and sum
// kernels (rows.cuh), each on the executor's compute stream. A mask beyond causal runs the
// sm80 kernels' masked instantiation, its arrays read from device memory (kernels/dev_mask.hpp:
// the kernels refuse a mask without its device copies).
#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/backend.hpp"
#include "kernels/cuda/rows.cuh"
#include "kernels/cudnn_sdpa.hpp"
#include "src/base/error.hpp"

namespace ringscale::kernels::cuda {

namespace {

attn_dtype attn_type(elem e) {
    if (e == elem::f32)
        throw config_error("the CUDA attention kernels take bf16 or fp16 inputs, not fp32 "
                           "(use --dtype bf16 or fp16)");
    if (e == elem::e4m3)
        throw config_error("fp8 attention runs on cuDNN only (--attn-kernel cudnn): the sm80 and "
                           "sm90 kernels take bf16 or fp16");
    return e == elem::bf16 ? attn_dtype::bf16 : attn_dtype::fp16;
}

attention_positions positions(const row_positions& q, const row_positions& k) {
    attention_positions p;
    p.q_pos = q.contiguous ? nullptr : q.dev;
    p.k_pos = k.contiguous ? nullptr : k.dev;
    p.q_first = q.count > 0 ? q.host[0] : 0;
    p.k_first = k.count > 0 ? k.host[0] : 0;
    return p;
}

} // namespace

bool attention_supports(executor&, elem e) {
    return e != elem::f32 && (e != elem::e4m3 || attention_path() == attn_path::cudnn);
}

void attention_fwd_init(executor& exec, const attention_shape& s, float* o, float* lse) {
    attention_fwd_init_cuda(s, o, lse, exec.stream());
}

// No progress calls: the kernel runs asynchronously, and testing a staged MPI request here
// could land its receive before the compute still reading that buffer ends.
void attention_fwd(executor& exec, const attention_shape& s, elem e, const void* q, const void* k,
                   const void* v, const row_positions& qp, const row_positions& kp, float* o,
                   float* lse, attention_split, const progress_fn&) {
    // --attn-kernel cudnn (checked against the build and the GPU when the launch bound it).
    if (attention_path() == attn_path::cudnn) {
        attention_fwd_cudnn(exec, s, e, q, k, v, qp, kp, o, lse);
        return;
    }
    attention_fwd_cuda(s, attn_type(e), q, k, v, positions(qp, kp), o, lse, exec.stream());
}

void attention_bwd_delta(executor& exec, const attention_shape& s, elem e, const float* o,
                         const void* d_o, float* delta) {
    if (attention_path() == attn_path::cudnn) {
        cudnn_keep_output(exec, s, e, o, d_o); // cuDNN's backward reads O
        if (e == elem::e4m3)
            return; // cuDNN's fp8 backward computes its own delta; ours takes no E4M3
    }
    attention_bwd_delta_cuda(s, attn_type(e), o, d_o, delta, exec.stream());
}

void attention_bwd(executor& exec, const attention_shape& s, elem e, const void* q, const void* k,
                   const void* v, const void* d_o, const float* lse, const float* delta,
                   const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                   float* dv, attention_split, const progress_fn&) {
    if (attention_path() == attn_path::cudnn) {
        attention_bwd_cudnn(exec, s, e, q, k, v, d_o, lse, qp, kp, dq, dk, dv);
        return;
    }
    attention_bwd_cuda(s, attn_type(e), q, k, v, d_o, lse, delta, positions(qp, kp), dq, dk, dv,
                       exec.stream());
}

void take_rows(executor& exec, std::size_t row_bytes, std::int64_t outer, std::int64_t src_rows,
               const row_positions& index, const void* src, void* dst) {
    take_rows_cuda(row_bytes, outer, src_rows, index.dev, index.count, src, dst, exec.stream());
}

void put_rows(executor& exec, std::size_t row_bytes, std::int64_t outer, std::int64_t dst_rows,
              const row_positions& index, const void* src, void* dst) {
    put_rows_cuda(row_bytes, outer, dst_rows, index.dev, index.count, src, dst, exec.stream());
}

void convert(executor& exec, elem e, std::size_t n, const float* src, void* dst) {
    to_attn_dtype_cuda(attn_type(e), n, src, dst, exec.stream());
}

void round_values(executor& exec, elem e, std::size_t n, float* x) {
    if (e != elem::f32)
        round_values_cuda(attn_type(e), n, x, exec.stream());
}

void add(executor& exec, std::size_t n, const float* a, const float* b, float* out) {
    add_cuda(n, a, b, out, exec.stream());
}

} // namespace ringscale::kernels::cuda
