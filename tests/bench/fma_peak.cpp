#include "tests/bench/fma_peak.hpp"

#include <algorithm>
#include <ctime>
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>

namespace ringscale::bench {
namespace {

constexpr int chains = 12; // independent accumulators: 2 FMA ports x latency 4-6 cycles
volatile float sink;       // keeps the compiler from dropping the loops

enum class isa_kind { avx512, avx2, sse };

isa_kind detect() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return isa_kind::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return isa_kind::avx2;
    return isa_kind::sse;
}

__attribute__((target("avx512f"))) void loop_avx512(long iters, float x, float y) {
    __m512 acc[chains];
    const __m512 a = _mm512_set1_ps(x), b = _mm512_set1_ps(y);
    for (auto& c : acc)
        c = _mm512_set1_ps(1.0f);
    for (long i = 0; i < iters; ++i)
        for (auto& c : acc)
            c = _mm512_fmadd_ps(c, a, b);
    __m512 s = acc[0];
    for (int c = 1; c < chains; ++c)
        s = _mm512_add_ps(s, acc[c]);
    alignas(64) float out[16]; // not _mm512_reduce_add_ps: GCC 12 warns inside it
    _mm512_store_ps(out, s);
    sink = out[0] + out[15];
}

__attribute__((target("avx2,fma"))) void loop_avx2(long iters, float x, float y) {
    __m256 acc[chains];
    const __m256 a = _mm256_set1_ps(x), b = _mm256_set1_ps(y);
    for (auto& c : acc)
        c = _mm256_set1_ps(1.0f);
    for (long i = 0; i < iters; ++i)
        for (auto& c : acc)
            c = _mm256_fmadd_ps(c, a, b);
    __m256 s = acc[0];
    for (int c = 1; c < chains; ++c)
        s = _mm256_add_ps(s, acc[c]);
    alignas(32) float out[8];
    _mm256_store_ps(out, s);
    sink = out[0] + out[7];
}

void loop_sse(long iters, float x, float y) {
    __m128 acc[chains];
    const __m128 a = _mm_set1_ps(x), b = _mm_set1_ps(y);
    for (auto& c : acc)
        c = _mm_set1_ps(1.0f);
    for (long i = 0; i < iters; ++i)
        for (auto& c : acc)
            c = _mm_add_ps(_mm_mul_ps(c, a), b);
    __m128 s = acc[0];
    for (int c = 1; c < chains; ++c)
        s = _mm_add_ps(s, acc[c]);
    sink = _mm_cvtss_f32(s);
}

void run_loop(isa_kind k, long iters) {
    // x < 1 and a small y keep every chain bounded (no overflow, no denormals).
    const float x = 0.999999f, y = 1e-6f;
    if (k == isa_kind::avx512)
        loop_avx512(iters, x, y);
    else if (k == isa_kind::avx2)
        loop_avx2(iters, x, y);
    else
        loop_sse(iters, x, y);
}

int lanes(isa_kind k) {
    return k == isa_kind::avx512 ? 16 : k == isa_kind::avx2 ? 8 : 4;
}

double seconds_of(clockid_t id) {
    timespec t{};
    clock_gettime(id, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

std::vector<int> allowed_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cores;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set))
                cores.push_back(c);
    if (cores.empty())
        cores.push_back(0);
    return cores;
}

void pin_to(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set); // best effort: a hint
}

struct round_result {
    double per_cpu_second = 0, per_wall_second = 0; // GFLOP/s, summed over the threads
};

/// One round: `threads` threads, each pinned to one of `cores`, each running `iters`.
round_result run_round(isa_kind k, const std::vector<int>& cores, int threads, long iters) {
    std::vector<double> cpu(threads), wall(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            pin_to(cores[t % cores.size()]);
            const double w0 = seconds_of(CLOCK_MONOTONIC);
            const double c0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
            run_loop(k, iters);
            cpu[t] = seconds_of(CLOCK_THREAD_CPUTIME_ID) - c0;
            wall[t] = seconds_of(CLOCK_MONOTONIC) - w0;
        });
    for (auto& th : pool)
        th.join();
    const double flops = double(iters) * chains * lanes(k) * 2.0;
    round_result r;
    for (int t = 0; t < threads; ++t) {
        r.per_cpu_second += flops / std::max(cpu[t], 1e-9) * 1e-9;
        r.per_wall_second += flops / std::max(wall[t], 1e-9) * 1e-9;
    }
    return r;
}

} // namespace

double fma_flops_per_iteration() {
    return chains * lanes(detect()) * 2.0;
}

fma_peak measure_fma_peak(int cores, int rounds, double seconds) {
    const isa_kind k = detect();
    const std::vector<int> allowed = allowed_cores();
    fma_peak p;
    p.isa = k == isa_kind::avx512 ? "avx512" : k == isa_kind::avx2 ? "avx2+fma" : "sse (no FMA)";
    // At most one thread per core: two threads time-sliced on one core would each count the
    // core's full rate per CPU second, and their sum would double it.
    const int n = static_cast<int>(allowed.size());
    p.cores = cores > 0 ? std::min(cores, n) : n;
    // Size the loop from a short probe so a round takes about `seconds` on an idle core.
    long iters = 1 << 16;
    const double c0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
    run_loop(k, iters);
    const double probe = std::max(seconds_of(CLOCK_THREAD_CPUTIME_ID) - c0, 1e-6);
    iters = std::max(1L, static_cast<long>(double(iters) * seconds / probe));
    for (int r = 0; r < std::max(1, rounds); ++r) {
        p.per_core = std::max(p.per_core, run_round(k, allowed, 1, iters).per_cpu_second);
        const round_result all = run_round(k, allowed, p.cores, iters);
        if (all.per_cpu_second > p.all_cores) {
            p.all_cores = all.per_cpu_second;
            p.all_cores_wall = all.per_wall_second;
        }
    }
    return p;
}

} // namespace ringscale::bench
