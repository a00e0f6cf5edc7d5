// A ring step's block through cuDNN (kernels/cudnn_sdpa.hpp, attention_fwd_cudnn): the step's
// plan from the host positions (kept per positions: a ring meets each step shape every
// iteration), then per call cuDNN's O (input type) and statistics into step buffers and the
// call's rows merged into the running fp32 (O, LSE) by the ring's merge (cudnn_merge.cuh).
// The backward (attention_bwd_cudnn) runs the same calls from the final merged O and LSE,
// each call's dQ, dK, dV pieces added into the step's fp32 gradients (fp8: O stored again in
// E4M3 at V's scale, each call's outputs at scales that follow the amaxes it reported last).
#include "kernels/cudnn_sdpa.hpp"

#include "kernels/cuda/cudnn_fp8_bwd.cuh"
#include "kernels/cuda/cudnn_merge.cuh"
#include "kernels/cudnn_fp8.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace ringscale::kernels::cuda {

namespace {

// Plans kept per thread (one per step shape of a case: P per ring at most).
constexpr std::size_t plans_kept = 256;

// The plan's identity: the positions themselves, causal and the mask's rules (the document
// starts by value: a later case's mask may sit at the same address).
struct plan_key {
    std::vector<std::int64_t> q, k, doc_start;
    bool causal = false;
    std::int64_t window = 0;
    bool operator<(const plan_key& o) const {
        return std::tie(causal, window, doc_start, q, k) <
               std::tie(o.causal, o.window, o.doc_start, o.q, o.k);
    }
};

std::vector<std::int64_t> host_positions(const row_positions& p) {
    if (!p.host)
        throw config_error("--attn-kernel cudnn: a block without host positions");
    return {p.host, p.host + p.count};
}

const cudnn_step_plan& plan_for(const attention_shape& s, const row_positions& qp,
                                const row_positions& kp) {
    thread_local std::map<plan_key, cudnn_step_plan> plans;
    thread_local std::list<std::map<plan_key, cudnn_step_plan>::iterator> order;
    plan_key key{host_positions(qp), host_positions(kp), {}, s.causal, s.mask.window};
    if (s.mask.docs > 0)
        key.doc_start.assign(s.mask.doc_start, s.mask.doc_start + s.mask.docs + 1);
    auto it = plans.find(key);
    if (it != plans.end())
        return it->second;
    cudnn_step_plan plan = plan_cudnn_step(key.q, key.k, s.causal, s.mask);
    if (!plan.fallback.empty())
        throw config_error("--attn-kernel cudnn: " + plan.fallback);
    if (plans.size() == plans_kept) {
        plans.erase(order.back());
        order.pop_back();
    }
    it = plans.emplace(std::move(key), std::move(plan)).first;
    order.push_front(it);
    return it->second;
}

// The step buffers, grown as needed, one set per thread.
struct step_buffers {
    void* o_step = nullptr; // cuDNN's O, of the input type
    float* stats = nullptr;
    std::size_t elems = 0, rows = 0;
    step_buffers() = default;
    step_buffers(const step_buffers&) = delete;
    step_buffers& operator=(const step_buffers&) = delete;
    ~step_buffers() {
        cudaFree(o_step);
        cudaFree(stats);
    }
    void fit(std::size_t n, std::size_t r) {
        if (n <= elems && r <= rows)
            return;
        cudaFree(o_step);
        cudaFree(stats);
        o_step = nullptr;
        stats = nullptr;
        elems = rows = 0;
        RINGSCALE_CUDA_CALL(cudaMalloc(&o_step, n * sizeof(std::uint16_t)));
        RINGSCALE_CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&stats), r * sizeof(float)));
        elems = n;
        rows = r;
    }
};

// A device buffer of 16-bit elements, grown as needed (raw CUDA memory: a thread's buffers
// outlive the executors that used them).
struct half_buffer {
    void* data = nullptr;
    std::size_t elems = 0;
    half_buffer() = default;
    half_buffer(const half_buffer&) = delete;
    half_buffer& operator=(const half_buffer&) = delete;
    ~half_buffer() { cudaFree(data); }
    void fit(std::size_t n) {
        if (n <= elems)
            return;
        cudaFree(data);
        data = nullptr;
        elems = 0;
        RINGSCALE_CUDA_CALL(cudaMalloc(&data, n * sizeof(std::uint16_t)));
        elems = n;
    }
};

// The backward's buffers, one set per thread: the final merged O in the input type (kept by
// cudnn_keep_output for the d_o it was paired with) and one call's dQ, dK, dV pieces.
struct backward_buffers {
    half_buffer o, dq, dk, dv;
    const void* o_for_d_o = nullptr; // the d_o whose O `o` holds
    std::size_t o_elems = 0;
};

backward_buffers& backward_here() {
    thread_local backward_buffers buf;
    return buf;
}

attn_dtype_kind kind_of(elem e) {
    if (e == elem::bf16)
        return attn_dtype_kind::bf16;
    if (e == elem::f16)
        return attn_dtype_kind::fp16;
    if (e == elem::e4m3)
        return attn_dtype_kind::fp8;
    throw config_error("--attn-kernel cudnn: cuDNN attention takes bf16, fp16 or fp8, not fp32");
}

// An fp8 call's scalars on the device, in the order of cudnn_sdpa_fwd_args (descale_q, _k,
// _v, descale_s, scale_s, scale_o, then the amax outputs), copied when the shape's descales
// change: once per case, in its warm-up.
class fp8_scalars {
  public:
    fp8_scalars() = default;
    fp8_scalars(const fp8_scalars&) = delete;
    fp8_scalars& operator=(const fp8_scalars&) = delete;
    ~fp8_scalars() { cudaFree(m_dev); }
    const float* on_device(const cudnn_fp8_scales& f, cudaStream_t stream) {
        const float want[count] = {f.descale_q, f.descale_k, f.descale_v, f.descale_s,
                                   f.scale_s,   f.scale_o,   0,           0};
        if (!m_dev)
            RINGSCALE_CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&m_dev), sizeof want));
        if (!m_set || std::memcmp(want, m_host, sizeof want) != 0) {
            std::memcpy(m_host, want, sizeof want);
            RINGSCALE_CUDA_CALL(
                cudaMemcpyAsync(m_dev, m_host, sizeof want, cudaMemcpyHostToDevice, stream));
            m_set = true;
        }
        return m_dev;
    }
    float* amax() { return m_dev + 6; }

  private:
    static constexpr int count = 8;
    float* m_dev = nullptr;
    float m_host[count] = {};
    bool m_set = false;
};

// One forward call and its merge; fp8 with the shape's scalars.
void forward_call(const attention_shape& s, elem e, const cudnn_call& call, const void* q,
                  const void* k, const void* v, step_buffers& buf, float* o, float* lse,
                  cudaStream_t stream) {
    cudnn_sdpa_fwd_args args{q, k, v, buf.o_step, buf.stats};
    if (e != elem::e4m3) {
        cudnn_sdpa_fwd({s, kind_of(e), call}, args, stream);
        cudnn_merge_cuda(e == elem::bf16 ? attn_dtype::bf16 : attn_dtype::fp16, buf.o_step,
                         buf.stats, s.batch * s.heads, s.q_len, call.q0, call.q_len, s.head_dim, o,
                         lse, stream);
        return;
    }
    thread_local fp8_scalars scalars;
    const cudnn_fp8_scales f = cudnn_fp8_from_descales(s.descale_q, s.descale_k, s.descale_v);
    const float* d = scalars.on_device(f, stream);
    args.descale_q = d;
    args.descale_k = d + 1;
    args.descale_v = d + 2;
    args.descale_s = d + 3;
    args.scale_s = d + 4;
    args.scale_o = d + 5;
    args.amax_s = scalars.amax();
    args.amax_o = scalars.amax() + 1;
    cudnn_sdpa_fwd({s, attn_dtype_kind::fp8, call}, args, stream);
    cudnn_merge_fp8_cuda(buf.o_step, f.descale_o, buf.stats, s.batch * s.heads, s.q_len, call.q0,
                         call.q_len, s.head_dim, o, lse, stream);
}

// One fp8 backward call's scalars on the device (fp8_slot's layout). The inputs' descales
// come from the shape, copied when they change; the outputs' scales are 1 on the call's first
// run and then follow the amaxes it reported (cudnn_fp8_rescale_cuda), so from its third run
// on they are current scaling's (kernels/cudnn_fp8.hpp).
class fp8_bwd_scalars {
  public:
    fp8_bwd_scalars() = default;
    fp8_bwd_scalars(const fp8_bwd_scalars&) = delete;
    fp8_bwd_scalars& operator=(const fp8_bwd_scalars&) = delete;
    ~fp8_bwd_scalars() { cudaFree(m_dev); }
    float* on_device(const attention_shape& s, cudaStream_t stream) {
        cudnn_fp8_bwd_scales b = cudnn_fp8_backward_scales(
            cudnn_fp8_from_descales(s.descale_q, s.descale_k, s.descale_v), 0, {});
        b.descale_do = s.descale_do;
        b.scale_do = 1 / s.descale_do;
        const auto want = cudnn_fp8_backward_scalars(b);
        if (!m_dev) {
            float all[fp8_slot::count] = {};
            std::copy(want.begin(), want.end(), all);
            all[fp8_slot::descale_dq] = all[fp8_slot::descale_dk] = all[fp8_slot::descale_dv] = 1;
            RINGSCALE_CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&m_dev), sizeof all));
            RINGSCALE_CUDA_CALL(
                cudaMemcpyAsync(m_dev, all, sizeof all, cudaMemcpyHostToDevice, stream));
            m_inputs = want;
            return m_dev;
        }
        // The inputs' slots: descale Q, K, V, O, dO, S (0 to 5) and scale S (7).
        if (!std::equal(want.begin(), want.begin() + 6, m_inputs.begin()) ||
            want[7] != m_inputs[7]) {
            m_inputs = want;
            RINGSCALE_CUDA_CALL(cudaMemcpyAsync(m_dev, m_inputs.data(), 6 * sizeof(float),
                                                cudaMemcpyHostToDevice, stream));
            RINGSCALE_CUDA_CALL(cudaMemcpyAsync(m_dev + 7, m_inputs.data() + 7, sizeof(float),
                                                cudaMemcpyHostToDevice, stream));
        }
        return m_dev;
    }

  private:
    float* m_dev = nullptr;
    std::array<float, 12> m_inputs{};
};

// The scalars of call `index` of `plan` (plans are kept by address, bounded: a slot seen
// again after its plan was dropped starts from scales that the next runs correct).
fp8_bwd_scalars& fp8_bwd_for(const cudnn_step_plan& plan, std::size_t index) {
    thread_local std::map<std::pair<const cudnn_step_plan*, std::size_t>,
                          std::unique_ptr<fp8_bwd_scalars>>
        by_call;
    if (by_call.size() >= 4 * plans_kept)
        by_call.clear();
    auto& slot = by_call[{&plan, index}];
    if (!slot)
        slot = std::make_unique<fp8_bwd_scalars>();
    return *slot;
}

// The step's fp8 backward calls: each from E4M3 Q, K, V, the kept O and dO at their descales,
// its E4M3 pieces added into fp32 times their descales, then its next output scales set.
void backward_fp8(const attention_shape& s, const cudnn_step_plan& plan, const void* q,
                  const void* k, const void* v, const void* d_o, const float* lse,
                  backward_buffers& buf, float* dq, float* dk, float* dv, cudaStream_t stream) {
    const std::int64_t bh = s.batch * s.heads, bkv = s.batch * s.kv_heads;
    for (std::size_t i = 0; i < plan.calls.size(); ++i) {
        const cudnn_call& call = plan.calls[i];
        float* d = fp8_bwd_for(plan, i).on_device(s, stream);
        cudnn_sdpa_bwd_args a{q, k, v, buf.o.data, d_o, lse, buf.dq.data, buf.dk.data, buf.dv.data};
        a.fp8_scalars = d;
        a.fp8_amax = d + fp8_slot::amax;
        cudnn_sdpa_bwd({s, attn_dtype_kind::fp8, call}, a, stream);
        cudnn_accumulate_fp8_cuda(buf.dq.data, d + fp8_slot::descale_dq, bh, s.q_len, call.q0,
                                  call.q_len, s.head_dim, dq, stream);
        cudnn_accumulate_fp8_cuda(buf.dk.data, d + fp8_slot::descale_dk, bkv, s.k_len, call.k0,
                                  call.k_len, s.head_dim, dk, stream);
        cudnn_accumulate_fp8_cuda(buf.dv.data, d + fp8_slot::descale_dv, bkv, s.k_len, call.k0,
                                  call.k_len, s.head_dim, dv, stream);
        cudnn_fp8_rescale_cuda(d, stream);
    }
}

} // namespace

void attention_fwd_cudnn(executor& exec, const attention_shape& s, elem e, const void* q,
                         const void* k, const void* v, const row_positions& qp,
                         const row_positions& kp, float* o, float* lse) {
    if (s.q_len == 0 || s.k_len == 0)
        return;
    const cudnn_step_plan& plan = plan_for(s, qp, kp);
    thread_local step_buffers buf;
    const auto n = static_cast<std::size_t>(attention_q_elems(s));
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    buf.fit(n, rows);
    const auto stream = static_cast<cudaStream_t>(exec.stream());
    for (const cudnn_call& call : plan.calls)
        forward_call(s, e, call, q, k, v, buf, o, lse, stream);
}

void cudnn_keep_output(executor& exec, const attention_shape& s, elem e, const float* o,
                       const void* d_o) {
    backward_buffers& buf = backward_here();
    (void)kind_of(e); // refuses fp32
    const auto n = static_cast<std::size_t>(attention_q_elems(s));
    buf.o.fit(n);
    if (e == elem::e4m3) // O at V's scale: |O| <= max|V|
        cudnn_fp8_encode_cuda(o, 1 / s.descale_v, static_cast<std::int64_t>(n), buf.o.data,
                              exec.stream());
    else
        to_attn_dtype_cuda(e == elem::bf16 ? attn_dtype::bf16 : attn_dtype::fp16, n, o, buf.o.data,
                           exec.stream());
    buf.o_for_d_o = d_o;
    buf.o_elems = n;
}

void attention_bwd_cudnn(executor& exec, const attention_shape& s, elem e, const void* q,
                         const void* k, const void* v, const void* d_o, const float* lse,
                         const row_positions& qp, const row_positions& kp, float* dq, float* dk,
                         float* dv) {
    if (s.q_len == 0 || s.k_len == 0)
        return;
    backward_buffers& buf = backward_here();
    const auto qn = static_cast<std::size_t>(attention_q_elems(s));
    const auto kn = static_cast<std::size_t>(attention_kv_elems(s));
    if (buf.o_for_d_o != d_o || buf.o_elems != qn)
        throw config_error("--attn-kernel cudnn: the backward's rows came without their output "
                           "(attention_bwd_delta first)");
    const cudnn_step_plan& plan = plan_for(s, qp, kp);
    buf.dq.fit(qn);
    buf.dk.fit(kn);
    buf.dv.fit(kn);
    const auto stream = static_cast<cudaStream_t>(exec.stream());
    if (e == elem::e4m3) {
        backward_fp8(s, plan, q, k, v, d_o, lse, buf, dq, dk, dv, stream);
        return;
    }
    const attn_dtype t = e == elem::bf16 ? attn_dtype::bf16 : attn_dtype::fp16;
    const std::int64_t bh = s.batch * s.heads, bkv = s.batch * s.kv_heads;
    for (const cudnn_call& call : plan.calls) {
        cudnn_sdpa_bwd({s, kind_of(e), call},
                       {q, k, v, buf.o.data, d_o, lse, buf.dq.data, buf.dk.data, buf.dv.data},
                       stream);
        // Two calls of a step may share rows: each call's pieces are added before the next.
        cudnn_accumulate_cuda(t, buf.dq.data, bh, s.q_len, call.q0, call.q_len, s.head_dim, dq,
                              stream);
        cudnn_accumulate_cuda(t, buf.dk.data, bkv, s.k_len, call.k0, call.k_len, s.head_dim, dk,
                              stream);
        cudnn_accumulate_cuda(t, buf.dv.data, bkv, s.k_len, call.k0, call.k_len, s.head_dim, dv,
                              stream);
    }
}

} // namespace ringscale::kernels::cuda
