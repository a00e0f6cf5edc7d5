// CUDA attention forward benchmark (not a test): attention_fwd_cuda on bf16, B=1, H=16
// (Hkv=16), D=128, causal and not, one K/V block holding the whole sequence (contiguous
// positions, the fast path), timed per call with CUDA events; median over iterations.
// FLOP convention (DESIGN.md): forward 4*B*S^2*H*D, halved when causal.
//
// Prints one line per case, "bf16 S CAUSAL MEDIAN_MS TFLOP_S", read by
// tests/bench/attention_gpu.sh next to tests/bench/sdpa_reference.py's identical lines.
// usage: bench_attention_gpu [iters=20] [seq ...=4096 8192 16384 32768]
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/random.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

using namespace ringscale::kernels;
namespace kc = ringscale::kernels::cuda;

namespace {

constexpr int warmup = 3;

/// A device tensor of `n` bf16 values, uniform in [-1, 1) (seeded), via an fp32 staging copy.
kc::device_buffer<std::uint16_t> seeded_bf16(std::size_t n, std::uint64_t seed) {
    std::vector<float> host(n);
    fill_uniform(host.data(), n, seed, 0);
    const kc::device_buffer<float> staging(host);
    kc::device_buffer<std::uint16_t> out(n);
    kc::to_attn_dtype_cuda(kc::attn_dtype::bf16, n, staging.data(), out.data());
    kc::device_synchronize();
    return out;
}

/// Median seconds of one forward call over `iters` timed calls (after warm-up). The calls
/// keep merging into the same (O, LSE), which costs what a ring step costs.
double time_forward(const attention_shape& s, const void* q, const void* k, const void* v, float* o,
                    float* lse, int iters) {
    const kc::attention_positions contiguous{};
    kc::attention_fwd_init_cuda(s, o, lse);
    for (int i = 0; i < warmup; ++i)
        kc::attention_fwd_cuda(s, kc::attn_dtype::bf16, q, k, v, contiguous, o, lse);
    std::vector<double> times;
    kc::cuda_event_timer timer;
    for (int i = 0; i < iters; ++i) {
        timer.start();
        kc::attention_fwd_cuda(s, kc::attn_dtype::bf16, q, k, v, contiguous, o, lse);
        timer.stop();
        times.push_back(timer.elapsed_s());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

void run_seq(std::int64_t seq, int iters) {
    attention_shape s;
    s.batch = 1;
    s.heads = s.kv_heads = 16;
    s.q_len = s.k_len = seq;
    s.head_dim = 128;
    const auto elems = static_cast<std::size_t>(attention_q_elems(s));
    const auto q = seeded_bf16(elems, 1), k = seeded_bf16(elems, 2), v = seeded_bf16(elems, 3);
    kc::device_buffer<float> o(elems), lse(static_cast<std::size_t>(s.heads * seq));
    for (const bool causal : {false, true}) {
        s.causal = causal;
        const double time_s =
            time_forward(s, q.data(), k.data(), v.data(), o.data(), lse.data(), iters);
        const double flop =
            4.0 * double(seq) * double(seq) * s.heads * s.head_dim * (causal ? 0.5 : 1.0);
        std::printf("bf16 %lld %d %.4f %.2f\n", static_cast<long long>(seq), causal ? 1 : 0,
                    time_s * 1e3, flop / time_s * 1e-12);
        std::fflush(stdout);
    }
}

} // namespace

int main(int argc, char** argv) {
    const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
    std::vector<std::int64_t> seqs;
    for (int i = 2; i < argc; ++i)
        seqs.push_back(std::strtoll(argv[i], nullptr, 10));
    if (seqs.empty())
        seqs = {4096, 8192, 16384, 32768};
    if (iters < 1 || std::any_of(seqs.begin(), seqs.end(), [](std::int64_t x) { return x < 1; })) {
        std::fprintf(stderr, "usage: bench_attention_gpu [iters >= 1] [seq >= 1 ...]\n");
        return 2;
    }
    if (kc::cuda_device_count() == 0) {
        std::fprintf(stderr, "bench_attention_gpu: no CUDA device visible; this benchmark needs "
                             "a GPU (and a CUDA build)\n");
        return 2;
    }
    try {
        std::printf("# ringscale attention_fwd_cuda, bf16, B=1, H=16, D=128, %d iters\n", iters);
        for (const std::int64_t seq : seqs)
            run_seq(seq, iters);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_attention_gpu: %s\n", e.what());
        return 1;
    }
    return 0;
}
