// CUDA attention benchmark (not a test): the forward (attention_fwd_cuda) and the backward
// (attention_bwd_delta_cuda + attention_bwd_cuda, after zeroing dQ, dK, dV as the kernel
// requires) on bf16, B=1, H=16 (Hkv=16), D=128, causal and not, one K/V block holding the
// whole sequence (contiguous positions, the fast path). Each call is timed with CUDA events;
// the median over iterations (after warm-up) is reported. --attn-kernel picks the kernel path
// (attention_path.hpp; a path this build or GPU cannot run: one line, exit 2); the header
// line names the path the forward resolved to.
// FLOP convention (DESIGN.md): forward 4*B*S^2*H*D, halved when causal; backward 2.5 x forward.
//
// Prints one line per case, "bf16 S CAUSAL PASS MEDIAN_MS TFLOP_S" (PASS fwd or bwd), read by
// tests/bench/attention_gpu.sh next to tests/bench/sdpa_reference.py's identical lines and by
// tests/bench/job_overhead.sh.
// usage: bench_attention_gpu [--pass fwd|bwd|both] [--causal 0|1|both]
//                            [--attn-kernel auto|sm80|sm90] [iters=20]
//                            [seq ...=4096 8192 16384 32768]
#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/cuda/attention_sm90.cuh"
#include "kernels/random.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

using namespace ringscale::kernels;
namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;

namespace {

constexpr int warmup = 3;
constexpr auto bf16 = kc::attn_dtype::bf16;

struct bench_options {
    bool fwd = true, bwd = true;
    std::vector<bool> causal = {false, true};
    int iters = 20;
    std::string path = "auto";
    std::vector<std::int64_t> seqs;
};

/// A device tensor of `n` bf16 values, uniform in [-1, 1) (seeded), via an fp32 staging copy.
rt::device_buffer<std::uint16_t> seeded_bf16(std::size_t n, std::uint64_t seed) {
    std::vector<float> host(n);
    fill_uniform(host.data(), n, seed, 0);
    const rt::device_buffer<float> staging(host);
    rt::device_buffer<std::uint16_t> out(n);
    kc::to_attn_dtype_cuda(bf16, n, staging.data(), out.data());
    rt::device_synchronize();
    return out;
}

/// Median seconds of `call` over `iters` timed calls, after `warmup` untimed ones.
double median_s(const std::function<void()>& call, int iters) {
    for (int i = 0; i < warmup; ++i)
        call();
    std::vector<double> times;
    rt::cuda_event_timer timer;
    for (int i = 0; i < iters; ++i) {
        timer.start();
        call();
        timer.stop();
        times.push_back(timer.elapsed_s());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

/// The tensors of one shape: inputs Q, K, V, dO (bf16), the forward's O and LSE, the
/// backward's delta and gradients (fp32).
struct attention_tensors {
    rt::device_buffer<std::uint16_t> q, k, v, d_o;
    rt::device_buffer<float> o, lse, delta, dq, dk, dv;
    explicit attention_tensors(std::size_t elems, std::size_t rows)
        : q(seeded_bf16(elems, 1)), k(seeded_bf16(elems, 2)), v(seeded_bf16(elems, 3)),
          d_o(seeded_bf16(elems, 4)), o(elems), lse(rows), delta(rows), dq(elems), dk(elems),
          dv(elems) {}
};

void print_case(std::int64_t seq, bool causal, const char* pass, double time_s, double flop) {
    std::printf("bf16 %lld %d %s %.4f %.2f\n", static_cast<long long>(seq), causal ? 1 : 0, pass,
                time_s * 1e3, flop / time_s * 1e-12);
    std::fflush(stdout);
}

void run_seq(std::int64_t seq, const bench_options& opt) {
    attention_shape s;
    s.batch = 1;
    s.heads = s.kv_heads = 16;
    s.q_len = s.k_len = seq;
    s.head_dim = 128;
    const auto elems = static_cast<std::size_t>(attention_q_elems(s));
    attention_tensors t(elems, static_cast<std::size_t>(s.heads * seq));
    const kc::attention_positions contiguous{};
    const std::size_t grad_bytes = elems * sizeof(float);
    for (const bool causal : opt.causal) {
        s.causal = causal;
        const double fwd_flop =
            4.0 * double(seq) * double(seq) * s.heads * s.head_dim * (causal ? 0.5 : 1.0);
        // The calls keep merging into the same (O, LSE), which costs what a ring step costs.
        kc::attention_fwd_init_cuda(s, t.o.data(), t.lse.data());
        auto forward = [&] {
            kc::attention_fwd_cuda(s, bf16, t.q.data(), t.k.data(), t.v.data(), contiguous,
                                   t.o.data(), t.lse.data());
        };
        if (opt.fwd)
            print_case(seq, causal, "fwd", median_s(forward, opt.iters), fwd_flop);
        if (!opt.bwd)
            continue;
        // The backward needs the final O and LSE of one whole forward.
        kc::attention_fwd_init_cuda(s, t.o.data(), t.lse.data());
        forward();
        auto backward = [&] {
            RINGSCALE_CUDA_CALL(cudaMemsetAsync(t.dq.data(), 0, grad_bytes, nullptr));
            RINGSCALE_CUDA_CALL(cudaMemsetAsync(t.dk.data(), 0, grad_bytes, nullptr));
            RINGSCALE_CUDA_CALL(cudaMemsetAsync(t.dv.data(), 0, grad_bytes, nullptr));
            kc::attention_bwd_delta_cuda(s, bf16, t.o.data(), t.d_o.data(), t.delta.data());
            kc::attention_bwd_cuda(s, bf16, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(),
                                   t.lse.data(), t.delta.data(), contiguous, t.dq.data(),
                                   t.dk.data(), t.dv.data());
        };
        print_case(seq, causal, "bwd", median_s(backward, opt.iters), 2.5 * fwd_flop);
    }
}

/// Parse the command line into `opt`; false (after one line on stderr) when it is malformed.
bool parse(int argc, char** argv, bench_options& opt) {
    int i = 1;
    for (; i + 1 < argc && std::strncmp(argv[i], "--", 2) == 0; i += 2) {
        const std::string name = argv[i], value = argv[i + 1];
        if (name == "--pass" && (value == "fwd" || value == "bwd" || value == "both")) {
            opt.fwd = value != "bwd";
            opt.bwd = value != "fwd";
        } else if (name == "--attn-kernel" &&
                   (value == "auto" || value == "sm80" || value == "sm90")) {
            opt.path = value;
        } else if (name == "--causal" && (value == "0" || value == "1" || value == "both")) {
            opt.causal =
                value == "both" ? std::vector<bool>{false, true} : std::vector<bool>{value == "1"};
        } else {
            break;
        }
    }
    if (i < argc)
        opt.iters = std::atoi(argv[i++]);
    for (; i < argc; ++i)
        opt.seqs.push_back(std::strtoll(argv[i], nullptr, 10));
    if (opt.seqs.empty())
        opt.seqs = {4096, 8192, 16384, 32768};
    const bool bad_seq =
        std::any_of(opt.seqs.begin(), opt.seqs.end(), [](std::int64_t x) { return x < 1; });
    if (opt.iters < 1 || bad_seq) {
        std::fprintf(stderr, "usage: bench_attention_gpu [--pass fwd|bwd|both] "
                             "[--causal 0|1|both] [--attn-kernel auto|sm80|sm90] [iters >= 1] "
                             "[seq >= 1 ...]\n");
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    bench_options opt;
    if (!parse(argc, argv, opt))
        return 2;
    if (rt::cuda_device_count() == 0) {
        std::fprintf(stderr, "bench_attention_gpu: no CUDA device visible; this benchmark needs "
                             "a GPU (and a CUDA build)\n");
        return 2;
    }
    std::string resolved;
    try {
        ringscale::kernels::set_attention_path(ringscale::kernels::parse_attn_path(opt.path));
        resolved = ringscale::kernels::to_string(ringscale::kernels::resolve_attention_path(0));
        if (resolved == std::string("sm90"))
            resolved += kc::sm90_overlap() ? ", overlapped softmax" : ", serial consumers";
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_attention_gpu: %s\n", e.what());
        return 2;
    }
    try {
        std::printf("# ringscale attention_fwd_cuda / attention_bwd_cuda, bf16, B=1, H=16, "
                    "D=128, %d iters, --attn-kernel %s (forward path %s)\n",
                    opt.iters, opt.path.c_str(), resolved.c_str());
        for (const std::int64_t seq : opt.seqs)
            run_seq(seq, opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_attention_gpu: %s\n", e.what());
        return 1;
    }
    return 0;
}
