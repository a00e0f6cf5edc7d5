// Validation of every attention job: the distributed result against the reference kernel
// (double accumulation) on the same seeded inputs. The reference is costly (O(S^2) per head
// in double), so its work is split over the ranks by (batch, kv-head group); each group is a
// complete single-rank reference computation.
#include "jobs/attention_common.hpp"
#include "kernels/cudnn_fp8.hpp"
#include "kernels/reference/attention_ref.hpp"

#include "kernels/threads.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <thread>

namespace ringscale::jobs {

namespace {

// fp32 tolerances for |got - ref| <= atol + rtol * |ref|; the ring adds P partial results
// in a different order than the reference, so errors grow mildly with S and P.
constexpr double fwd_atol = 1e-4, fwd_rtol = 1e-3;
constexpr double bwd_atol = 5e-4, bwd_rtol = 2e-3;

// bf16/fp16 (the GPU kernels; tests/kernels/cuda/test_attention_gpu.cpp derives them): P and dS are
// rounded to the input type (unit roundoff u) before their products, accumulation is fp32,
// so |O - O_ref| <= 2u * max|V| and |g - g_ref| <= 4u * max|g_ref| per tensor, here per
// reference group (the inputs are already rounded, so the reference sees what the device saw).
struct tolerance {
    double atol = 0, rtol = 0;
};

double max_abs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v)
        m = std::max(m, static_cast<double>(std::fabs(x)));
    return m;
}

tolerance fwd_tolerance(kernels::elem type, const std::vector<float>& v) {
    if (type == kernels::elem::f32)
        return {fwd_atol, fwd_rtol};
    if (type == kernels::elem::e4m3) // cuDNN's fp8 forward (kernels/cudnn_fp8.hpp)
        return {kernels::cudnn_fp8_o_tolerance(max_abs(v)), 0.0};
    return {2.0 * kernels::unit_roundoff(type) * max_abs(v), 0.0};
}

tolerance bwd_tolerance(kernels::elem type, const std::vector<float>& ref) {
    if (type == kernels::elem::f32)
        return {bwd_atol, bwd_rtol};
    if (type == kernels::elem::e4m3) // cuDNN's fp8 backward (kernels/cudnn_fp8.hpp)
        return {kernels::cudnn_fp8_grad_tolerance(max_abs(ref)), 0.0};
    return {4.0 * kernels::unit_roundoff(type) * max_abs(ref), 0.0};
}

struct error_tally {
    double max_abs = 0;
    double atol = 0; ///< the largest absolute tolerance applied
    std::uint64_t wrong = 0;
};

// Compare `want` (reference of one (b, head) block, [rows, D]) with rows of the global tensor.
void compare(const float* got, const std::vector<float>& want, tolerance tol, error_tally& t) {
    t.atol = std::max(t.atol, tol.atol);
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
        if (!(err <= tol.atol + tol.rtol * std::fabs(want[i]))) // NaN counts as wrong
            ++t.wrong;
        if (!(err <= t.max_abs))
            t.max_abs = std::isnan(err) ? INFINITY : err;
    }
}

// One reference group's inputs and outputs (a worker's scratch).
struct group_scratch {
    std::vector<float> q, k, v, d_o, o, lse, dq, dk, dv;
    group_scratch(std::size_t q_elems, std::size_t kv_elems, std::size_t rows)
        : q(q_elems), k(kv_elems), v(kv_elems), d_o(q_elems), o(q_elems), lse(rows), dq(q_elems),
          dk(kv_elems), dv(kv_elems) {}
};

void merge(error_tally& into, const error_tally& t) {
    into.max_abs = std::max(into.max_abs, t.max_abs);
    into.atol = std::max(into.atol, t.atol);
    into.wrong += t.wrong;
}

} // namespace

validation validate_attention(comm::communicator& c, const attention_problem& pr,
                              std::uint64_t seed, const attention_result& result) {
    const std::int64_t s = pr.seq_len, d = pr.head_dim, g = pr.heads / pr.kv_heads;
    std::vector<std::int64_t> pos(static_cast<std::size_t>(s));
    std::iota(pos.begin(), pos.end(), 0);
    kernels::attention_shape shape;
    shape.heads = g;
    shape.kv_heads = 1;
    shape.q_len = shape.k_len = s;
    shape.head_dim = d;
    shape.causal = pr.causal;
    shape.mask = pr.mask_view();
    const auto q_elems = static_cast<std::size_t>(g * s * d),
               kv_elems = static_cast<std::size_t>(s * d);
    // This rank's groups, spread over its threads (the reference is single-threaded and
    // dominates a validated launch on a GPU); each worker keeps its own tallies.
    std::vector<std::int64_t> mine;
    for (std::int64_t grp = c.rank(); grp < pr.batch * pr.kv_heads; grp += c.size())
        mine.push_back(grp);
    const int workers = static_cast<int>(
        std::max<std::size_t>(1, std::min<std::size_t>(mine.size(), kernels::blas_threads())));
    std::vector<error_tally> fwd_of(workers), bwd_of(workers);
    std::atomic<std::size_t> next{0};
    auto work = [&](int w) {
        group_scratch x(q_elems, kv_elems, static_cast<std::size_t>(g * s));
        for (std::size_t i = next++; i < mine.size(); i = next++) {
            const std::int64_t grp = mine[i];
            const std::int64_t b = grp / pr.kv_heads, kvh = grp % pr.kv_heads;
            for (std::int64_t h = 0; h < g; ++h) {
                fill_head_rows(tensor_id::q, seed, pr, b, kvh * g + h, pos, x.q.data() + h * s * d);
                fill_head_rows(tensor_id::d_out, seed, pr, b, kvh * g + h, pos,
                               x.d_o.data() + h * s * d);
            }
            fill_head_rows(tensor_id::k, seed, pr, b, kvh, pos, x.k.data());
            fill_head_rows(tensor_id::v, seed, pr, b, kvh, pos, x.v.data());
            // Global Q-like tensors are [B, H, S, D]: heads kvh*g .. kvh*g+g-1 of batch b are
            // contiguous; K-like ones are [B, Hkv, S, D].
            const std::size_t q_off = static_cast<std::size_t>((b * pr.heads + kvh * g) * s * d);
            const std::size_t kv_off = static_cast<std::size_t>((b * pr.kv_heads + kvh) * s * d);
            kernels::reference::attention_fwd_ref(shape, x.q.data(), x.k.data(), x.v.data(),
                                                  pos.data(), pos.data(), x.o.data(), x.lse.data());
            compare(result.o.data() + q_off, x.o, fwd_tolerance(pr.type, x.v), fwd_of[w]);
            if (!pr.backward)
                continue;
            kernels::reference::attention_bwd_ref(shape, x.q.data(), x.k.data(), x.v.data(),
                                                  x.d_o.data(), pos.data(), pos.data(), x.dq.data(),
                                                  x.dk.data(), x.dv.data());
            compare(result.dq.data() + q_off, x.dq, bwd_tolerance(pr.type, x.dq), bwd_of[w]);
            compare(result.dk.data() + kv_off, x.dk, bwd_tolerance(pr.type, x.dk), bwd_of[w]);
            compare(result.dv.data() + kv_off, x.dv, bwd_tolerance(pr.type, x.dv), bwd_of[w]);
        }
    };
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w)
        pool.emplace_back(work, w);
    work(0);
    for (auto& t : pool)
        t.join();
    error_tally fwd, bwd;
    for (int w = 0; w < workers; ++w) {
        merge(fwd, fwd_of[w]);
        merge(bwd, bwd_of[w]);
    }
    validation out;
    out.checked = true;
    out.max_abs_err = std::max(fwd.max_abs, bwd.max_abs);
    out.tolerance = std::max(fwd.atol, bwd.atol); // this rank's; the run loop takes the max
    out.wrong = fwd.wrong + bwd.wrong;
    out.ok = out.wrong == 0;
    if (!out.ok)
        out.detail =
            fmt::format("{} elements outside tolerance (abs {:.3g}{}; max abs error {:.3g})",
                        out.wrong, out.tolerance,
                        pr.type == kernels::elem::f32
                            ? fmt::format(" + {}*|ref|", pr.backward ? bwd_rtol : fwd_rtol)
                        : pr.type == kernels::elem::e4m3
                            ? std::string(", 4u*max|V| with u = 2^-4")
                            : fmt::format(", {}u*max|ref| with u = 2^{}", pr.backward ? 4 : 2,
                                          pr.type == kernels::elem::bf16 ? -8 : -11),
                        out.max_abs_err);
    return out;
}

} // namespace ringscale::jobs
