// bench_dense: GFLOP/s of the linear layer (kernels/linear) against bare cblas_sgemm on the same
// shapes, in the same run, with the same BLAS thread count. Not a test: it only measures.
//
//   bench_dense [--tokens 4096] [--hidden 512] [--threads 2] [--reps 15] [--warmup 3]
//
// Shapes are the training step's MLP: hidden → 4·hidden and 4·hidden → hidden. FLOPs: forward
// 2·T·in·out; backward 4·T·in·out (dx and dW products; the O(T·out) bias sum and bias seeding
// are not counted, so they show up as lost GFLOP/s). Each repetition runs the four variants
// back to back (round robin), so drift on a shared machine hits all of them alike.
#include "kernels/cpu/linear.hpp"
#include "kernels/random.hpp"
#include "kernels/threads.hpp"
#include "src/base/clock.hpp"
#include "src/base/memory.hpp"

#include <algorithm>
#include <cblas.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace ringscale;
using namespace ringscale::kernels;
using namespace ringscale::kernels::cpu;

namespace {

struct options {
    std::size_t tokens = 4096, hidden = 512;
    int threads = 2, reps = 15, warmup = 3;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const long value = std::strtol(argv[i + 1], nullptr, 10);
        if (value <= 0) {
            std::fprintf(stderr, "bench_dense: %s needs a positive integer\n", key.c_str());
            std::exit(2);
        }
        if (key == "--tokens")
            o.tokens = static_cast<std::size_t>(value);
        else if (key == "--hidden")
            o.hidden = static_cast<std::size_t>(value);
        else if (key == "--threads")
            o.threads = static_cast<int>(value);
        else if (key == "--reps")
            o.reps = static_cast<int>(value);
        else if (key == "--warmup")
            o.warmup = static_cast<int>(value);
        else {
            std::fprintf(stderr, "bench_dense: unknown option %s\n", key.c_str());
            std::exit(2);
        }
    }
    if (argc % 2 == 0) {
        std::fprintf(stderr, "bench_dense: options come in --name value pairs\n");
        std::exit(2);
    }
    return o;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct variant {
    const char* name;
    double flops;
    std::function<void()> run;
    std::vector<double> times_s = {};
};

// Runs every variant once per repetition, round robin; keeps the timed repetitions.
void measure(std::vector<variant>& vs, const options& o) {
    for (int rep = 0; rep < o.warmup + o.reps; ++rep)
        for (variant& v : vs) {
            const double t0 = now_s();
            v.run();
            const double t = now_s() - t0;
            if (rep >= o.warmup)
                v.times_s.push_back(t);
        }
}

// Variants come in pairs (ours, then its bare-sgemm partner); the ratio is partner / ours.
void report(const std::vector<variant>& vs) {
    std::printf("  %-18s %12s %12s %12s %10s\n", "variant", "median_ms", "min_ms", "GFLOP/s(med)",
                "vs sgemm");
    for (std::size_t k = 0; k < vs.size(); ++k) {
        const double med = median(vs[k].times_s);
        const double best = *std::min_element(vs[k].times_s.begin(), vs[k].times_s.end());
        const double partner = median(vs[k % 2 ? k : k + 1].times_s);
        std::printf("  %-18s %12.3f %12.3f %12.1f %9.3fx\n", vs[k].name, med * 1e3, best * 1e3,
                    vs[k].flops / med * 1e-9, partner / med);
    }
}

void bench_shape(const options& o, std::size_t in, std::size_t out) {
    const linear_shape s{o.tokens, in, out};
    host_buffer<float> x(s.tokens * in), w(out * in), b(out), y(s.tokens * out);
    host_buffer<float> dy(s.tokens * out), dx(s.tokens * in), dw(out * in, 0.0f), db(out, 0.0f);
    fill_uniform(x.data(), x.size(), 1, 0);
    fill_uniform(w.data(), w.size(), 2, 0, 0.05f);
    fill_uniform(b.data(), b.size(), 3, 0);
    fill_uniform(dy.data(), dy.size(), 4, 0);
    const int T = static_cast<int>(s.tokens), I = static_cast<int>(in), O = static_cast<int>(out);
    auto ours_fwd = [&] { linear_fwd(s, x.data(), w.data(), b.data(), y.data()); };
    auto blas_fwd = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, O, I, 1.0f, x.data(), I, w.data(),
                    I, 0.0f, y.data(), O);
    };
    auto ours_bwd = [&] {
        linear_bwd(s, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
    };
    auto blas_bwd = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, I, O, 1.0f, dy.data(), O,
                    w.data(), I, 0.0f, dx.data(), I);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, O, I, T, 1.0f, dy.data(), O, x.data(),
                    I, 1.0f, dw.data(), I);
    };
    const double fwd = linear_fwd_flops(s), bwd = 2.0 * fwd;
    std::vector<variant> vs{{"linear_fwd", fwd, ours_fwd},
                            {"sgemm fwd (NT)", fwd, blas_fwd},
                            {"linear_bwd", bwd, ours_bwd},
                            {"sgemm bwd (NN+TN)", bwd, blas_bwd}};
    measure(vs, o);
    std::printf("\ntokens %zu, %zu -> %zu\n", s.tokens, in, out);
    report(vs);
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    set_blas_threads(o.threads);
    std::printf("bench_dense: OpenBLAS %s, %d BLAS threads (requested %d), %d warm-up + %d timed "
                "reps, median over reps\n",
                openblas_get_config(), blas_threads(), o.threads, o.warmup, o.reps);
    bench_shape(o, o.hidden, 4 * o.hidden);
    bench_shape(o, 4 * o.hidden, o.hidden);
    return 0;
}
