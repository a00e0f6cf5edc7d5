// cuDNN fused attention benchmark (not a test): ringscale's cuDNN call (kernels/cudnn_sdpa.hpp)
// forward and backward, bf16, B=1, H=16, D=128, causal and not, one line per case in
// sdpa_reference.py's format ("bf16 S CAUSAL PASS MEDIAN_MS TFLOP_S"); the fp8 forward beside
// it where the GPU has fp8 attention ("fp8 S CAUSAL fwd ..."); and one rank's P=4 zigzag ring
// steps, causal (its cuDNN calls and fp32 merges through the kernels' dispatch, on this GPU),
// against one unsharded causal call of the same visible work ("zigzag S 1 fwd MS TF/s
// UNSHARDED_TF/s RATIO"). Graphs are built in the warm-up, outside the timed calls.
// FLOPs: 4*B*H*D per visible (query, key) pair forward, backward 2.5 x forward.
// usage: bench_cudnn_gpu [ITERS=20] [SEQ ...=8192 16384 32768]; exit 2 with one line when there
// is no GPU or no cuDNN in this build.
#include "kernels/attention_path.hpp"
#include "kernels/cudnn_sdpa.hpp"
#include "kernels/kernels.hpp"
#include "kernels/layout.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace rk = ringscale::kernels;
namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;

namespace {

constexpr std::int64_t heads = 16, head_dim = 128;

double median_ms(int iters, const std::function<void()>& fn) {
    for (int i = 0; i < 3; ++i)
        fn(); // warm-up: graphs built here
    std::vector<double> t;
    cudaEvent_t a, b;
    RINGSCALE_CUDA_CALL(cudaEventCreate(&a));
    RINGSCALE_CUDA_CALL(cudaEventCreate(&b));
    for (int i = 0; i < iters; ++i) {
        RINGSCALE_CUDA_CALL(cudaEventRecord(a));
        fn();
        RINGSCALE_CUDA_CALL(cudaEventRecord(b));
        RINGSCALE_CUDA_CALL(cudaEventSynchronize(b));
        float ms = 0;
        RINGSCALE_CUDA_CALL(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[(t.size() - 1) / 2];
}

double pairs(std::int64_t s, bool causal) {
    return causal ? double(s) * double(s + 1) / 2 : double(s) * double(s);
}

rk::cudnn_call whole_call(std::int64_t s, bool causal) {
    rk::cudnn_call c{0, s, 0, s, {}};
    if (causal)
        c.band = {rk::cudnn_align::top_left, 0, 0};
    return c;
}

rk::attention_shape shape_of(std::int64_t s, bool causal) {
    rk::attention_shape sh;
    sh.heads = sh.kv_heads = heads;
    sh.q_len = sh.k_len = s;
    sh.head_dim = head_dim;
    sh.causal = causal;
    return sh;
}

// One call's forward and backward, bf16, and the fp8 forward where the GPU has it.
void bench_calls(int iters, std::int64_t s, bool causal, bool fp8) {
    const auto sh = shape_of(s, causal);
    const auto n = static_cast<std::size_t>(rk::attention_q_elems(sh));
    rt::device_buffer<std::uint16_t> q(n), k(n), v(n), o(n), d_o(n), dq(n), dk(n), dv(n);
    rt::device_buffer<float> lse(static_cast<std::size_t>(heads * s));
    const std::vector<std::uint16_t> small(n, 0x3c00); // bf16 2^-7: a finite softmax
    for (auto* b : {&q, &k, &v, &d_o})
        b->copy_from_host(small.data(), n);
    const kc::cudnn_sdpa_call c{sh, rk::attn_dtype_kind::bf16, whole_call(s, causal)};
    const double flops = 4.0 * heads * head_dim * pairs(s, causal);
    const double f = median_ms(iters, [&] {
        kc::cudnn_sdpa_fwd(c, {q.data(), k.data(), v.data(), o.data(), lse.data()}, nullptr);
    });
    std::printf("bf16 %lld %d fwd %.3f %.1f\n", static_cast<long long>(s), causal ? 1 : 0, f,
                flops / f * 1e-9);
    const double bw = median_ms(iters, [&] {
        kc::cudnn_sdpa_bwd(c,
                           {q.data(), k.data(), v.data(), o.data(), d_o.data(), lse.data(),
                            dq.data(), dk.data(), dv.data()},
                           nullptr);
    });
    std::printf("bf16 %lld %d bwd %.3f %.1f\n", static_cast<long long>(s), causal ? 1 : 0, bw,
                2.5 * flops / bw * 1e-9);
    if (!fp8)
        return;
    const kc::cudnn_sdpa_call c8{sh, rk::attn_dtype_kind::fp8, whole_call(s, causal)};
    rt::device_buffer<float> sc(std::vector<float>{1, 1, 1, 1, 1, 1, 0, 0});
    float* d = sc.data();
    const double f8 = median_ms(iters, [&] {
        kc::cudnn_sdpa_fwd(c8,
                           {q.data(), k.data(), v.data(), o.data(), lse.data(), d, d + 1, d + 2,
                            d + 3, d + 4, d + 5, d + 6, d + 7},
                           nullptr);
    });
    std::printf("fp8 %lld %d fwd %.3f %.1f\n", static_cast<long long>(s), causal ? 1 : 0, f8,
                flops / f8 * 1e-9);
}

// Rank 0's four zigzag steps through the dispatch (plan, calls, merges) against one causal
// call of S/2 (the same visible pairs, within S/2's rounding).
void bench_zigzag(int iters, std::int64_t s) {
    const int ranks = 4;
    rk::set_attention_path(rk::attn_path::cudnn);
    auto exec = rk::make_executor(ringscale::device_kind::cuda);
    const std::int64_t n = s / ranks;
    auto sh = shape_of(n, true);
    const auto elems = static_cast<std::size_t>(rk::attention_q_elems(sh));
    rt::device_buffer<std::uint16_t> q(elems), k(elems), v(elems);
    for (auto* b : {&q, &k, &v})
        b->copy_from_host(std::vector<std::uint16_t>(elems, 0x3c00).data(), elems);
    rt::device_buffer<float> o(elems), lse(static_cast<std::size_t>(heads * n));
    std::deque<rk::dev_positions> pos; // not moved: its buffers stay put
    for (int r = 0; r < ranks; ++r)
        pos.emplace_back(*exec, rk::layout_positions(rk::layout::zigzag, s, ranks, r));
    double visible = 0;
    for (int r = 0; r < ranks; ++r)
        visible +=
            double(rk::visible_pairs(rk::layout_positions(rk::layout::zigzag, s, ranks, 0),
                                     rk::layout_positions(rk::layout::zigzag, s, ranks, r), true));
    const double t = median_ms(iters, [&] {
        rk::attention_fwd_init(*exec, sh, o.data(), lse.data());
        for (int step = 0; step < ranks; ++step)
            rk::attention_fwd(
                *exec, sh, rk::elem::bf16, q.data(), k.data(), v.data(), pos[0].view(),
                pos[static_cast<std::size_t>(rk::ring_source_rank(0, step, ranks))].view(),
                o.data(), lse.data(), rk::attention_split::whole, {});
    });
    rk::set_attention_path(rk::attn_path::automatic);
    const std::int64_t su = s / 2;
    const auto shu = shape_of(su, true);
    const auto eu = static_cast<std::size_t>(rk::attention_q_elems(shu));
    rt::device_buffer<std::uint16_t> qu(eu), ou(eu);
    qu.copy_from_host(std::vector<std::uint16_t>(eu, 0x3c00).data(), eu);
    rt::device_buffer<float> lu(static_cast<std::size_t>(heads * su));
    const kc::cudnn_sdpa_call cu{shu, rk::attn_dtype_kind::bf16, whole_call(su, true)};
    const double tu = median_ms(iters, [&] {
        kc::cudnn_sdpa_fwd(cu, {qu.data(), qu.data(), qu.data(), ou.data(), lu.data()}, nullptr);
    });
    const double tf = 4.0 * heads * head_dim * visible / t * 1e-9;
    const double tfu = 4.0 * heads * head_dim * pairs(su, true) / tu * 1e-9;
    std::printf("zigzag %lld 1 fwd %.3f %.1f %.1f %.3f\n", static_cast<long long>(s), t, tf, tfu,
                tf / tfu);
}

} // namespace

int main(int argc, char** argv) {
    try {
        const int iters = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
        std::vector<std::int64_t> seqs;
        for (int i = 2; i < argc; ++i)
            seqs.push_back(std::atoll(argv[i]));
        if (seqs.empty())
            seqs = {8192, 16384, 32768};
        if (!rk::cudnn_compiled()) {
            std::fprintf(stderr, "bench_cudnn_gpu: this ringscale was built without cuDNN\n");
            return 2;
        }
        if (rt::cuda_device_count() == 0) {
            std::fprintf(stderr, "bench_cudnn_gpu: no CUDA device\n");
            return 2;
        }
        int major = 0;
        RINGSCALE_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
        std::printf("# ringscale cuDNN %s (frontend %s), bf16 B=1 H=%lld D=%lld\n",
                    rk::cudnn_runtime_version().c_str(), rk::cudnn_frontend_version().c_str(),
                    static_cast<long long>(heads), static_cast<long long>(head_dim));
        for (const std::int64_t s : seqs)
            for (const bool causal : {false, true})
                bench_calls(iters, s, causal, major >= 9);
        for (const std::int64_t s : seqs)
            bench_zigzag(iters, s);
        const auto st = kc::cudnn_graph_cache_stats();
        std::printf("# graphs built %llu (%.2f s, outside the timed calls), reused %llu\n",
                    static_cast<unsigned long long>(st.builds), st.build_s,
                    static_cast<unsigned long long>(st.hits));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_cudnn_gpu: %s\n", e.what());
        return 2;
    }
    return 0;
}
