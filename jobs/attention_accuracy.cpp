// The measurement's collective frame (attention_accuracy.hpp): the samples, the distributed
// values of the sampled rows and the row statistics brought to every rank, the groups split
// over the ranks (attention_accuracy_group.cpp computes one), the tallies reduced.
#include "jobs/attention_accuracy.hpp"
#include "jobs/attention_accuracy_group.hpp"

#include "src/base/clock.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cmath>

namespace ringscale::jobs {

namespace {

using acc_detail::sampled_values;

/// Index of global row `pos` among this rank's sorted rows, or -1.
std::int64_t local_index(const std::vector<std::int64_t>& mine, std::int64_t pos) {
    const auto it = std::lower_bound(mine.begin(), mine.end(), pos);
    return it != mine.end() && *it == pos ? it - mine.begin() : -1;
}

/// Every rank's values of the sampled rows, on every rank: each rank writes the rows it
/// holds into zeros and a sum brings them together (one writer per slot, so exact).
sampled_values gather_sampled(comm::communicator& c, const attention_problem& pr,
                              const acc_detail::samples& smp, const std::vector<std::int64_t>& mine,
                              const local_result& r) {
    const std::int64_t d = pr.head_dim, rows = static_cast<std::int64_t>(mine.size());
    const std::int64_t qw = smp.q_width(pr), kw = 2 * d;
    sampled_values v;
    v.q.assign(static_cast<std::size_t>(pr.batch * pr.heads * smp.nq * qw), 0.0f);
    v.k.assign(static_cast<std::size_t>(pr.batch * pr.kv_heads * smp.nk * kw), 0.0f);
    for (std::int64_t bh = 0; bh < pr.batch * pr.heads; ++bh)
        for (std::int64_t i = 0; i < smp.nq; ++i) {
            const std::int64_t at = local_index(mine, smp.q_rows[bh][i]);
            if (at < 0)
                continue;
            float* slot = v.q.data() + (bh * smp.nq + i) * qw;
            std::copy_n(r.o.data() + (bh * rows + at) * d, d, slot);
            slot[d] = r.lse[static_cast<std::size_t>(bh * rows + at)];
            if (pr.backward)
                std::copy_n(r.dq.data() + (bh * rows + at) * d, d, slot + d + 1);
        }
    for (std::int64_t bk = 0; pr.backward && bk < pr.batch * pr.kv_heads; ++bk)
        for (std::int64_t j = 0; j < smp.nk; ++j) {
            const std::int64_t at = local_index(mine, smp.k_rows[bk][j]);
            if (at < 0)
                continue;
            float* slot = v.k.data() + (bk * smp.nk + j) * kw;
            std::copy_n(r.dk.data() + (bk * rows + at) * d, d, slot);
            std::copy_n(r.dv.data() + (bk * rows + at) * d, d, slot + d);
        }
    c.allreduce(v.q.data(), v.q.data(), v.q.size(), comm::dtype::f32, comm::reduce_op::sum);
    if (!v.k.empty())
        c.allreduce(v.k.data(), v.k.data(), v.k.size(), comm::dtype::f32, comm::reduce_op::sum);
    return v;
}

/// The distributed result's LSE and delta of every row [B, H, S] on every rank (the key
/// reference's row statistics): delta from this rank's O and dO by the kernels' own formula
/// (kernels/accuracy.hpp, host_attention_delta: the CUDA order for bf16/fp16).
void gather_stats(comm::communicator& c, const attention_problem& pr, std::uint64_t seed,
                  const std::vector<std::int64_t>& mine, const local_result& r, sampled_values& v) {
    const auto rows = static_cast<std::int64_t>(mine.size());
    const std::int64_t n = pr.batch * pr.heads * rows;
    std::vector<float> d_o(static_cast<std::size_t>(n * pr.head_dim)),
        delta(static_cast<std::size_t>(n));
    fill_shard(tensor_id::d_out, seed, pr, 0, pr.heads, mine, d_o.data());
    kernels::attention_shape s;
    s.batch = pr.batch;
    s.heads = s.kv_heads = pr.heads;
    s.q_len = rows;
    s.head_dim = pr.head_dim;
    kernels::host_attention_delta(s, r.o.data(), d_o.data(), delta.data(), pr.type);
    const std::int64_t all = pr.batch * pr.heads * pr.seq_len;
    v.lse.assign(static_cast<std::size_t>(all), 0.0f);
    v.delta.assign(static_cast<std::size_t>(all), 0.0f);
    for (std::int64_t bh = 0; bh < pr.batch * pr.heads; ++bh)
        for (std::int64_t i = 0; i < rows; ++i) {
            const auto at = static_cast<std::size_t>(bh * pr.seq_len + mine[i]);
            v.lse[at] = r.lse[static_cast<std::size_t>(bh * rows + i)];
            v.delta[at] = delta[static_cast<std::size_t>(bh * rows + i)];
        }
    c.allreduce(v.lse.data(), v.lse.data(), v.lse.size(), comm::dtype::f32, comm::reduce_op::sum);
    c.allreduce(v.delta.data(), v.delta.data(), v.delta.size(), comm::dtype::f32,
                comm::reduce_op::sum);
}

/// Each tally's (max_err, max_ref) by max and (sum_sq, count) by sum over the ranks.
void reduce(comm::communicator& c, accuracy_tallies& t) {
    std::vector<double> maxes, sums;
    for (kernels::error_tally* x : {t.dist, t.single})
        for (int i = 0; i < acc_tensor_count; ++i) {
            maxes.insert(maxes.end(), {x[i].max_err, x[i].max_ref});
            sums.insert(sums.end(), {x[i].sum_sq, x[i].count});
        }
    maxes.push_back(t.seconds);
    c.allreduce(maxes.data(), maxes.data(), maxes.size(), comm::dtype::f64, comm::reduce_op::max);
    c.allreduce(sums.data(), sums.data(), sums.size(), comm::dtype::f64, comm::reduce_op::sum);
    std::size_t k = 0;
    for (kernels::error_tally* x : {t.dist, t.single})
        for (int i = 0; i < acc_tensor_count; ++i, k += 2) {
            x[i].max_err = maxes[k];
            x[i].max_ref = maxes[k + 1];
            x[i].sum_sq = sums[k];
            x[i].count = sums[k + 1];
        }
    t.seconds = maxes.back();
}

} // namespace

const char* acc_tensor_name(acc_tensor t) {
    static const char* names[] = {"o", "lse", "dq", "dk", "dv"};
    return names[static_cast<int>(t)];
}

attr_map accuracy_tallies::attrs() const {
    namespace attr = schema::attr;
    attr_map a = {{attr::acc_query_rows, query_rows},
                  {attr::acc_key_rows, key_rows},
                  {attr::acc_reference_s, seconds}};
    for (int i = 0; i < acc_tensor_count; ++i) {
        const std::string t = acc_tensor_name(static_cast<acc_tensor>(i));
        if (dist[i].count == 0)
            continue; // not measured (the gradients of a forward)
        for (const auto& [who, tally] : {std::pair{"", &dist[i]}, {"single_", &single[i]}}) {
            const double mx = tally->max_rel(), rms = tally->rms_rel();
            if (std::isnan(mx) || std::isnan(rms))
                continue;
            a[schema::acc_attr(who, t, "max_rel")] = mx;
            a[schema::acc_attr(who, t, "rms_rel")] = rms;
        }
    }
    return a;
}

accuracy_tallies measure_accuracy(comm::communicator& c, kernels::executor& exec,
                                  const attention_problem& pr, std::uint64_t seed,
                                  std::int64_t sample,
                                  const std::vector<std::vector<std::int64_t>>& positions,
                                  const kernels::mask_view& mask, const local_result& mine) {
    const double start = now_s();
    const auto& rows = positions[static_cast<std::size_t>(c.rank())];
    const acc_detail::samples smp = acc_detail::draw_samples(pr, seed, sample);
    sampled_values v = gather_sampled(c, pr, smp, rows, mine);
    if (pr.backward)
        gather_stats(c, pr, seed, rows, mine, v);
    accuracy_tallies t;
    t.query_rows = smp.nq;
    t.key_rows = pr.backward ? smp.nk : 0;
    for (std::int64_t g = c.rank(); g < pr.batch * pr.kv_heads; g += c.size())
        acc_detail::measure_group(exec, pr, seed, mask, smp, v, g, t);
    t.seconds = now_s() - start;
    reduce(c, t);
    return t;
}

double accuracy_cost_fraction(const attention_problem& pr, std::int64_t sample, int ranks) {
    const double s = static_cast<double>(pr.seq_len), d = static_cast<double>(pr.head_dim);
    const double heads = static_cast<double>(pr.batch * pr.heads);
    const double n = std::min<double>(static_cast<double>(sample), s);
    // FLOP per (row, key, channel): fp64 query side 4 (QK, PV), +6 backward (QK, dP, dQ);
    // key side 8 (QK, dP, dV, dK); fp64 counted twice; the single-rank fp32 kernels alike once;
    // ~10 FLOP per generated input value (all K, V; with a backward all Q, dO).
    const double query = heads * n * s * d * (pr.backward ? 10.0 : 4.0);
    const double keys = pr.backward ? heads * s * n * d * 8.0 : 0.0;
    const double values =
        10.0 * s * d * static_cast<double>(pr.batch) *
        (2.0 * static_cast<double>(pr.kv_heads) + (pr.backward ? 2.0 * pr.heads : 0.0));
    // Measured against these counts, the measurement's loops run about 5x slower per FLOP
    // than the case's kernels (tests/bench/accuracy_study.sh: 2.3-5.2x at S = 16K-64K), and
    // its groups (batch x kv heads) share the ranks while the case's work is split over all.
    constexpr double slower = 5.0;
    const double groups = static_cast<double>(std::max<std::int64_t>(pr.batch * pr.kv_heads, 1));
    const double p = std::max(ranks, 1), busy = std::min(p, groups);
    const double work =
        slower * (3.0 * (query + keys) + values) * std::ceil(groups / busy) / groups;
    return pr.flops() > 0 ? work / (pr.flops() / p) : 0.0;
}

std::uint64_t accuracy_bytes(const attention_problem& pr, std::int64_t sample) {
    const double s = static_cast<double>(pr.seq_len), d = static_cast<double>(pr.head_dim);
    const double n = std::min<double>(static_cast<double>(sample), s);
    // One group at a time: K, V and (backward) Q, dO of every row in fp32 and the dtype, dQ
    // scratch; the row statistics of every head; the sampled values; fp64 chunks (~4 x 8 MiB).
    const double group = s * d * 4.0 * (pr.backward ? 8.0 : 3.0);
    const double stats = pr.backward ? 8.0 * s * static_cast<double>(pr.batch * pr.heads) : 0.0;
    const double sampled = 4.0 * n * static_cast<double>(pr.batch * pr.heads) * (2 * d + 1) * 2;
    return bytes_from_estimate(group + stats + sampled + 4.0 * (8 << 20));
}

} // namespace ringscale::jobs
