// cuDNN fused attention through the frontend's graph API (kernels/cudnn_sdpa.hpp): one graph
// per call shape, built on first use and kept in a bounded per-thread cache; a cuDNN handle
// per thread and device; one grow-only workspace per thread.
#include "kernels/cudnn_sdpa.hpp"

#include "kernels/cuda/cudnn_graphs.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"

#include <chrono>
#include <fmt/format.h>
#include <map>
#include <unordered_map>

namespace ringscale::kernels::cuda {

namespace {

namespace fe = cudnn_frontend;

// Graphs kept per thread: enough for every step shape of a few cases (a zigzag ring needs
// three per direction), small enough that plans never pile up across a sweep.
constexpr std::size_t graphs_per_thread = 64;

class cudnn_handle {
  public:
    cudnn_handle() {
        const cudnnStatus_t s = cudnnCreate(&m_handle);
        if (s != CUDNN_STATUS_SUCCESS)
            throw error(error_kind::cuda, fmt::format("cudnnCreate: {}", cudnnGetErrorString(s)));
    }
    ~cudnn_handle() { cudnnDestroy(m_handle); }
    cudnn_handle(const cudnn_handle&) = delete;
    cudnn_handle& operator=(const cudnn_handle&) = delete;
    cudnnHandle_t get() const { return m_handle; }

  private:
    cudnnHandle_t m_handle = nullptr;
};

class workspace {
  public:
    workspace() = default;
    ~workspace() {
        if (m_ptr)
            cudaFree(m_ptr);
    }
    workspace(const workspace&) = delete;
    workspace& operator=(const workspace&) = delete;
    void* at_least(std::int64_t bytes) {
        if (bytes <= m_bytes)
            return m_ptr;
        if (m_ptr)
            RINGSCALE_CUDA_CALL(cudaFree(m_ptr));
        m_ptr = nullptr;
        RINGSCALE_CUDA_CALL(cudaMalloc(&m_ptr, static_cast<std::size_t>(bytes)));
        m_bytes = bytes;
        return m_ptr;
    }

  private:
    void* m_ptr = nullptr;
    std::int64_t m_bytes = 0;
};

// What one thread keeps for one device.
struct device_state {
    cudnn_handle handle;
    workspace space;
    cudnn_graph_cache<fe::graph::Graph> graphs{graphs_per_thread};
};

// This thread's state per device.
std::map<int, std::unique_ptr<device_state>>& states() {
    thread_local std::map<int, std::unique_ptr<device_state>> by_device;
    return by_device;
}

device_state& state_here() {
    int device = 0;
    RINGSCALE_CUDA_CALL(cudaGetDevice(&device));
    auto& s = states()[device];
    if (!s)
        s = std::make_unique<device_state>();
    return *s;
}

double seconds_now() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

cudnn_graph_key key_of(const cudnn_sdpa_call& c, bool backward) {
    const attention_shape& s = c.shape;
    return make_cudnn_graph_key(backward, c.dtype, s.batch, s.heads, s.kv_heads, s.head_dim,
                                s.q_len, s.k_len, c.call, attention_scale(s));
}

std::shared_ptr<fe::graph::Graph> graph_for(device_state& st, const cudnn_sdpa_call& c,
                                            bool backward) {
    return st.graphs.get(
        key_of(c, backward),
        [&] {
            auto g = backward ? build_sdpa_bwd_graph(c) : build_sdpa_fwd_graph(c);
            check_frontend(g->build_operation_graph(st.handle.get()), "build_operation_graph");
            check_frontend(g->create_execution_plans({fe::HeurMode_t::A}),
                           "create_execution_plans");
            check_frontend(g->check_support(st.handle.get()), "check_support");
            check_frontend(g->build_plans(st.handle.get()), "build_plans");
            return g;
        },
        seconds_now);
}

// Element offsets to byte pointers of the call's pieces.
const void* piece(const void* base, std::int64_t elems, std::size_t elem_bytes) {
    return static_cast<const char*>(base) + elems * static_cast<std::int64_t>(elem_bytes);
}

void* piece(void* base, std::int64_t elems, std::size_t elem_bytes) {
    return static_cast<char*>(base) + elems * static_cast<std::int64_t>(elem_bytes);
}

// The variant pack's Q, K, V: the call's pieces of the step tensors.
std::unordered_map<std::int64_t, void*> qkv_pack(const cudnn_sdpa_call& c, const void* q,
                                                 const void* k, const void* v) {
    const std::size_t eb = cudnn_elem_bytes(c.dtype);
    const auto qv = cudnn_q_view(c.shape, c.call), kv = cudnn_kv_view(c.shape, c.call);
    return {{uid::q, const_cast<void*>(piece(q, qv.offset, eb))},
            {uid::k, const_cast<void*>(piece(k, kv.offset, eb))},
            {uid::v, const_cast<void*>(piece(v, kv.offset, eb))}};
}

void run(device_state& st, const fe::graph::Graph& g, std::unordered_map<std::int64_t, void*>& pack,
         void* stream) {
    const cudnnStatus_t s = cudnnSetStream(st.handle.get(), static_cast<cudaStream_t>(stream));
    if (s != CUDNN_STATUS_SUCCESS)
        throw error(error_kind::cuda, fmt::format("cudnnSetStream: {}", cudnnGetErrorString(s)));
    std::int64_t bytes = 0;
    check_frontend(g.get_workspace_size(bytes), "get_workspace_size");
    check_frontend(g.execute(st.handle.get(), pack, st.space.at_least(bytes)), "execute");
}

// The fp8 backward's scalars (cudnn_fp8_backward_scalars' order) and amax outputs.
void add_fp8_backward_scalars(const cudnn_sdpa_bwd_args& a,
                              std::unordered_map<std::int64_t, void*>& pack) {
    if (!a.fp8_scalars || !a.fp8_amax)
        throw config_error("cudnn_sdpa_bwd: fp8 needs its scalars and amax outputs");
    const std::int64_t ids[] = {uid::descale_q,  uid::descale_k, uid::descale_v,  uid::descale_o,
                                uid::descale_do, uid::descale_s, uid::descale_dp, uid::scale_s,
                                uid::scale_dq,   uid::scale_dk,  uid::scale_dv,   uid::scale_dp};
    for (int i = 0; i < 12; ++i)
        pack[ids[i]] = const_cast<float*>(a.fp8_scalars + i);
    const std::int64_t amax_ids[] = {uid::amax_dq, uid::amax_dk, uid::amax_dv, uid::amax_dp};
    for (int i = 0; i < 4; ++i)
        pack[amax_ids[i]] = a.fp8_amax + i;
}

} // namespace

void cudnn_sdpa_fwd(const cudnn_sdpa_call& c, const cudnn_sdpa_fwd_args& a, void* stream) {
    device_state& st = state_here();
    const auto g = graph_for(st, c, false);
    const std::size_t eb = cudnn_elem_bytes(c.dtype);
    const auto qv = cudnn_q_view(c.shape, c.call);
    const auto sv = cudnn_stats_view(c.shape, c.call);
    std::unordered_map<std::int64_t, void*> pack = qkv_pack(c, a.q, a.k, a.v);
    pack[uid::o] = piece(a.o, qv.offset, eb);
    pack[uid::stats] = a.stats + sv.offset;
    if (c.dtype == attn_dtype_kind::fp8) {
        const float* in[] = {a.descale_q, a.descale_k, a.descale_v,
                             a.descale_s, a.scale_s,   a.scale_o};
        const std::int64_t ids[] = {uid::descale_q, uid::descale_k, uid::descale_v,
                                    uid::descale_s, uid::scale_s,   uid::scale_o};
        for (int i = 0; i < 6; ++i) {
            if (!in[i])
                throw config_error("cudnn_sdpa_fwd: fp8 needs every scale and descale");
            pack[ids[i]] = const_cast<float*>(in[i]);
        }
        if (!a.amax_s || !a.amax_o)
            throw config_error("cudnn_sdpa_fwd: fp8 needs the amax outputs");
        pack[uid::amax_s] = a.amax_s;
        pack[uid::amax_o] = a.amax_o;
    }
    run(st, *g, pack, stream);
}

void cudnn_sdpa_bwd(const cudnn_sdpa_call& c, const cudnn_sdpa_bwd_args& a, void* stream) {
    if (c.dtype == attn_dtype_kind::fp32)
        throw config_error("cudnn_sdpa_bwd: takes bf16, fp16 or fp8, not fp32");
    device_state& st = state_here();
    const auto g = graph_for(st, c, true);
    const std::size_t eb = cudnn_elem_bytes(c.dtype);
    const auto qv = cudnn_q_view(c.shape, c.call), kv = cudnn_kv_view(c.shape, c.call);
    const auto sv = cudnn_stats_view(c.shape, c.call);
    std::unordered_map<std::int64_t, void*> pack = qkv_pack(c, a.q, a.k, a.v);
    pack[uid::o] = const_cast<void*>(piece(a.o, qv.offset, eb));
    pack[uid::d_o] = const_cast<void*>(piece(a.d_o, qv.offset, eb));
    pack[uid::stats] = const_cast<float*>(a.stats + sv.offset);
    pack[uid::dq] = piece(a.dq, qv.offset, eb);
    pack[uid::dk] = piece(a.dk, kv.offset, eb);
    pack[uid::dv] = piece(a.dv, kv.offset, eb);
    if (c.dtype == attn_dtype_kind::fp8)
        add_fp8_backward_scalars(a, pack);
    run(st, *g, pack, stream);
}

cudnn_cache_stats cudnn_graph_cache_stats() {
    cudnn_cache_stats all; // every device's, creating nothing
    for (const auto& [device, st] : states()) {
        const cudnn_cache_stats& s = st->graphs.stats();
        all.builds += s.builds;
        all.hits += s.hits;
        all.evictions += s.evictions;
        all.build_s += s.build_s;
    }
    return all;
}

} // namespace ringscale::kernels::cuda
