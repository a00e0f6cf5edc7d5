// Single-rank CPU attention kernel benchmark (not a test): forward and backward GFLOP/s
// against OpenBLAS sgemm GFLOP/s measured in the same run with the same thread count, and as a
// fraction of the measured all-core fp32 FMA peak (tests/bench/fma_peak.hpp; goals:
// dense forward and forward+backward >= 0.8 at D=128, forward >= 0.75 at D=64, causal within
// 10% of dense per FLOP). Each kernel's rate is printed over wall time and per CPU second (the
// process's CPU time times the kernel's threads: its rate on cores of its own); on a busy machine
// the first falls while the peak (per CPU second) does not, so the goals are judged on the second.
// FLOP convention (DESIGN.md): forward 4*B*S^2*H*D, halved when causal; backward 2.5x.
//
// usage: bench_attention_kernel [seq heads head_dim threads iters q_tile k_tile gemm_n]
#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/random.hpp"
#include "kernels/threads.hpp"
#include "src/base/clock.hpp"
#include "src/base/memory.hpp"
#include "tests/bench/fma_peak.hpp"

#include <algorithm>
#include <cblas.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// A kernel's GFLOP/s and sgemm's GFLOP/s measured in alternating rounds, so both see the
/// same machine load (the cores are shared); medians over rounds, and the median ratio.
/// kernel_cpu_gflops: the kernel's FLOPs per second of the process's CPU time, times the
/// threads it runs on: its rate on that many cores of its own, which load does not lower
/// (the FMA peak is counted the same way), min and max over rounds beside the median.
struct rates {
    double kernel_s, kernel_gflops, gemm_gflops, ratio;
    double kernel_cpu_gflops, cpu_min, cpu_max;
};

/// Seconds of CPU time this process has used, all its threads.
double cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

int kernel_threads = 1; // threads the kernels run on, set in main

struct gemm_problem {
    int n;
    host_buffer<float> a, b, c;
    void run() {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                    n, 0.0f, c.data(), n);
    }
    double flop() const { return 2.0 * n * double(n) * n; }
};

gemm_problem make_gemm(int n) {
    const auto elems = static_cast<std::size_t>(n) * n;
    gemm_problem g{n, host_buffer<float>(elems), host_buffer<float>(elems),
                   host_buffer<float>(elems)};
    fill_uniform(g.a.data(), elems, 1, 0);
    fill_uniform(g.b.data(), elems, 2, 0);
    return g;
}

rates measure(int iters, double flop, const std::function<void()>& kernel, gemm_problem& gemm) {
    kernel(); // warm-up
    gemm.run();
    std::vector<double> ks, kg, gg, ratio, kc;
    for (int i = 0; i < iters; ++i) {
        double start = now_s();
        gemm.run();
        const double g_s = now_s() - start;
        // OpenBLAS's workers spin for a while after a call; their CPU time would count as the
        // kernel's. A pause lets them sleep first.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        start = now_s();
        const double cpu0 = cpu_s();
        kernel();
        const double k_s = now_s() - start;
        kc.push_back(flop / std::max(cpu_s() - cpu0, 1e-9) * kernel_threads * 1e-9);
        ks.push_back(k_s);
        kg.push_back(flop / k_s * 1e-9);
        gg.push_back(gemm.flop() / g_s * 1e-9);
        ratio.push_back(kg.back() / gg.back());
    }
    const auto [lo, hi] = std::minmax_element(kc.begin(), kc.end());
    return {median(ks), median(kg), median(gg), median(ratio), median(kc), *lo, *hi};
}

struct bench_tensors {
    host_buffer<float> q, k, v, o, lse, d_o, delta, dq, dk, dv;
    std::vector<std::int64_t> pos;
};

bench_tensors make_tensors(const attention_shape& s) {
    bench_tensors t;
    const auto qn = static_cast<std::size_t>(attention_q_elems(s));
    const auto kn = static_cast<std::size_t>(attention_kv_elems(s));
    const auto rows = static_cast<std::size_t>(s.batch * s.heads * s.q_len);
    for (auto* b : {&t.q, &t.o, &t.d_o, &t.dq})
        b->resize(qn);
    for (auto* b : {&t.k, &t.v, &t.dk, &t.dv})
        b->resize(kn);
    t.lse.resize(rows);
    t.delta.resize(rows);
    fill_uniform(t.q.data(), qn, 1, 0);
    fill_uniform(t.k.data(), kn, 2, 0);
    fill_uniform(t.v.data(), kn, 3, 0);
    fill_uniform(t.d_o.data(), qn, 4, 0);
    t.pos.resize(static_cast<std::size_t>(s.q_len));
    std::iota(t.pos.begin(), t.pos.end(), 0);
    return t;
}

double fma_peak_gflops = 0; // all cores, measured once in main

void print(const char* name, const char* pass, const rates& r) {
    std::printf("%-10s %-8s %8.4f s %7.1f GFLOP/s | sgemm %7.1f GFLOP/s | ratio %.2f | %.2f of "
                "FMA peak | per CPU s %7.1f (%.1f-%.1f) GFLOP/s, %.2f of FMA peak\n",
                name, pass, r.kernel_s, r.kernel_gflops, r.gemm_gflops, r.ratio,
                r.kernel_gflops / fma_peak_gflops, r.kernel_cpu_gflops, r.cpu_min, r.cpu_max,
                r.kernel_cpu_gflops / fma_peak_gflops);
}

/// The forward's and the forward+backward's rates of one case.
struct case_rates {
    rates fwd, both;
};

/// Times forward, backward and both of one case.
case_rates run_case(attention_shape s, bool causal, int iters, attention_workspace& ws,
                    gemm_problem& gemm) {
    s.causal = causal;
    bench_tensors t = make_tensors(s);
    const double fwd_flop =
        4.0 * s.batch * double(s.q_len) * s.k_len * s.heads * s.head_dim * (causal ? 0.5 : 1.0);
    auto fwd = [&] {
        attention_fwd_init(s, t.o.data(), t.lse.data());
        attention_fwd_cpu(s, t.q.data(), t.k.data(), t.v.data(), t.pos.data(), t.pos.data(),
                          t.o.data(), t.lse.data(), ws);
    };
    auto bwd = [&] {
        std::fill(t.dq.begin(), t.dq.end(), 0.0f);
        std::fill(t.dk.begin(), t.dk.end(), 0.0f);
        std::fill(t.dv.begin(), t.dv.end(), 0.0f);
        attention_bwd_delta(s, t.o.data(), t.d_o.data(), t.delta.data());
        attention_bwd_cpu(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(), t.lse.data(),
                          t.delta.data(), t.pos.data(), t.pos.data(), t.dq.data(), t.dk.data(),
                          t.dv.data(), ws);
    };
    const char* name = causal ? "causal" : "non-causal";
    const rates f = measure(iters, fwd_flop, fwd, gemm);
    print(name, "fwd", f);
    print(name, "bwd", measure(iters, 2.5 * fwd_flop, bwd, gemm));
    const rates both = measure(
        iters, 3.5 * fwd_flop, [&] { fwd(), bwd(); }, gemm);
    print(name, "fwd+bwd", both);
    return {f, both};
}

constexpr const char* k_usage =
    "usage: bench_attention_kernel [seq heads head_dim threads iters q_tile k_tile gemm_n]\n"
    "  defaults 4096 8 64 <cores> 5 256 256 2048; head_dim 64 or 128\n";

/// Argument i as a whole number in [lo, hi], else `fallback` when absent; anything else (a
/// word, a sign, a fraction, out of range) ends the run with the usage, before any allocation.
long arg(int argc, char** argv, int i, long fallback, long lo, long hi) {
    if (argc <= i)
        return fallback;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || errno != 0 || v < lo || v > hi) {
        std::fprintf(stderr,
                     "bench_attention_kernel: argument %d must be a whole number in %ld-%ld\n%s", i,
                     lo, hi, k_usage);
        std::exit(2);
    }
    return v;
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
        std::fputs(k_usage, stdout);
        return 0;
    }
    attention_shape s;
    s.q_len = s.k_len = arg(argc, argv, 1, 4096, 16, 65536);
    s.heads = s.kv_heads = arg(argc, argv, 2, 8, 1, 64);
    s.head_dim = arg(argc, argv, 3, 64, 64, 128);
    if (s.head_dim != 64 && s.head_dim != 128) {
        std::fprintf(stderr, "bench_attention_kernel: head_dim must be 64 or 128\n%s", k_usage);
        return 2;
    }
    const int threads = static_cast<int>(arg(argc, argv, 4, cores_available(), 1, 1024));
    const int iters = static_cast<int>(arg(argc, argv, 5, 5, 1, 1000));
    const attention_tiles tiles{arg(argc, argv, 6, attention_tiles{}.q_tile, 16, 4096),
                                arg(argc, argv, 7, attention_tiles{}.k_tile, 16, 4096)};
    const int gemm_n = static_cast<int>(arg(argc, argv, 8, 2048, 64, 8192));
    set_blas_threads(threads);
    kernel_threads = blas_threads();
    attention_workspace ws;
    attention_workspace_reserve(ws, tiles);

    std::printf("attention kernel: B=%ld S=%ld H=%ld D=%ld fp32, tiles q=%ld k=%ld, "
                "%d BLAS threads, median of %d\n",
                long(s.batch), long(s.q_len), long(s.heads), long(s.head_dim), long(tiles.q_tile),
                long(tiles.k_tile), blas_threads(), iters);
    std::printf("FLOPs: forward 4*B*S^2*H*D (causal halved), backward 2.5x forward\n");
    std::printf("sgemm reference: %d^3, same threads, timed in alternation with each kernel\n",
                gemm_n);
    const auto peak = bench::measure_fma_peak(threads);
    fma_peak_gflops = peak.all_cores;
    std::printf("FMA peak (%s, best of 5 rounds, per CPU second): %.1f GFLOP/s on %d core(s), "
                "%.1f on one\n",
                peak.isa.c_str(), peak.all_cores, peak.cores, peak.per_core);
    gemm_problem gemm = make_gemm(gemm_n);
    const case_rates dense = run_case(s, false, iters, ws, gemm);
    const case_rates causal = run_case(s, true, iters, ws, gemm);
    std::printf("target non-causal forward >= 0.5 x sgemm: %s (ratio %.2f)\n",
                dense.fwd.ratio >= 0.5 ? "met" : "NOT met", dense.fwd.ratio);
    // The goals on the rates per CPU second, as the peak: on a shared machine the wall-time
    // rates fall with the load while the peak does not.
    const double goal = s.head_dim >= 128 ? 0.8 : 0.75;
    const double f = dense.fwd.kernel_cpu_gflops / peak.all_cores;
    const double b = dense.both.kernel_cpu_gflops / peak.all_cores;
    std::printf("target dense forward >= %.2f of the FMA peak (D=%ld, per CPU second): %s (%.2f)\n",
                goal, long(s.head_dim), f >= goal ? "met" : "NOT met", f);
    if (s.head_dim >= 128)
        std::printf("target dense forward+backward >= 0.80 of the FMA peak (per CPU second): %s "
                    "(%.2f)\n",
                    b >= 0.8 ? "met" : "NOT met", b);
    const double per_flop = causal.fwd.kernel_cpu_gflops / dense.fwd.kernel_cpu_gflops;
    std::printf("target causal forward within 10%% of dense per FLOP (per CPU second): %s (%.2f)\n",
                per_flop >= 0.9 ? "met" : "NOT met", per_flop);
    return 0;
}
