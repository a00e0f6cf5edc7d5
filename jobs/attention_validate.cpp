// Validation of every attention job: the distributed result against the reference kernel
// (double accumulation) on the same seeded inputs. The reference is costly (O(S^2) per head
// in double), so its work is split over the ranks by (batch, kv-head group); each group is a
// complete single-rank reference computation.
#include "jobs/attention_common.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

namespace ringscale::jobs {

namespace {

// fp32 tolerances for |got - ref| <= atol + rtol * |ref|; the ring adds P partial results
// in a different order than the reference, so errors grow mildly with S and P.
constexpr double fwd_atol = 1e-4, fwd_rtol = 1e-3;
constexpr double bwd_atol = 5e-4, bwd_rtol = 2e-3;

struct error_tally {
    double max_abs = 0;
    std::uint64_t wrong = 0;
};

// Compare `want` (reference of one (b, head) block, [rows, D]) with rows of the global tensor.
void compare(const float* got, const float* want, std::size_t n, double atol, double rtol,
             error_tally& t) {
    for (std::size_t i = 0; i < n; ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
        if (!(err <= atol + rtol * std::fabs(want[i]))) // NaN counts as wrong
            ++t.wrong;
        if (!(err <= t.max_abs))
            t.max_abs = std::isnan(err) ? INFINITY : err;
    }
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
    const auto q_elems = static_cast<std::size_t>(g * s * d),
               kv_elems = static_cast<std::size_t>(s * d);
    std::vector<float> q(q_elems), k(kv_elems), v(kv_elems), d_o(q_elems), o(q_elems),
        lse(static_cast<std::size_t>(g * s)), dq(q_elems), dk(kv_elems), dv(kv_elems);
    error_tally fwd, bwd;
    const std::int64_t groups = pr.batch * pr.kv_heads;
    for (std::int64_t grp = c.rank(); grp < groups; grp += c.size()) {
        const std::int64_t b = grp / pr.kv_heads, kvh = grp % pr.kv_heads;
        for (std::int64_t h = 0; h < g; ++h) {
            fill_head_rows(tensor_id::q, seed, pr, b, kvh * g + h, pos, q.data() + h * s * d);
            fill_head_rows(tensor_id::d_out, seed, pr, b, kvh * g + h, pos, d_o.data() + h * s * d);
        }
        fill_head_rows(tensor_id::k, seed, pr, b, kvh, pos, k.data());
        fill_head_rows(tensor_id::v, seed, pr, b, kvh, pos, v.data());
        // Global Q-like tensors are [B, H, S, D]: heads kvh*g .. kvh*g+g-1 of batch b are
        // contiguous; K-like ones are [B, Hkv, S, D].
        const std::size_t q_off = static_cast<std::size_t>((b * pr.heads + kvh * g) * s * d);
        const std::size_t kv_off = static_cast<std::size_t>((b * pr.kv_heads + kvh) * s * d);
        kernels::attention_fwd_ref(shape, q.data(), k.data(), v.data(), pos.data(), pos.data(),
                                   o.data(), lse.data());
        compare(result.o.data() + q_off, o.data(), q_elems, fwd_atol, fwd_rtol, fwd);
        if (!pr.backward)
            continue;
        kernels::attention_bwd_ref(shape, q.data(), k.data(), v.data(), d_o.data(), pos.data(),
                                   pos.data(), dq.data(), dk.data(), dv.data());
        compare(result.dq.data() + q_off, dq.data(), q_elems, bwd_atol, bwd_rtol, bwd);
        compare(result.dk.data() + kv_off, dk.data(), kv_elems, bwd_atol, bwd_rtol, bwd);
        compare(result.dv.data() + kv_off, dv.data(), kv_elems, bwd_atol, bwd_rtol, bwd);
    }
    validation out;
    out.checked = true;
    out.max_abs_err = std::max(fwd.max_abs, bwd.max_abs);
    out.tolerance = pr.backward ? bwd_atol : fwd_atol;
    out.wrong = fwd.wrong + bwd.wrong;
    out.ok = out.wrong == 0;
    if (!out.ok)
        out.detail = fmt::format(
            "{} elements outside |err| <= {} + {}*|ref| (max abs error {:.3g})", out.wrong,
            out.tolerance, pr.backward ? bwd_rtol : fwd_rtol, out.max_abs_err);
    return out;
}

} // namespace ringscale::jobs
