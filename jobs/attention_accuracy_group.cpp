// One (batch, kv head) group of the accuracy measurement (attention_accuracy.hpp): the fp64
// reference (kernels/reference/attention_sampled.hpp) and the single-rank computation of the
// sampled rows through the executor's own kernels (the CPU's, bf16/fp16 emulated; on CUDA the
// device's), each compared with the gathered distributed values.
#include "jobs/attention_accuracy_group.hpp"

#include "kernels/mask_count.hpp"
#include "kernels/reference/attention_sampled.hpp"

namespace ringscale::jobs::acc_detail {

namespace {

using kernels::dev_buffer;
using kernels::dev_positions;

/// One head's problem: `q` rows at their positions against `k` rows.
kernels::attention_shape one_head(const attention_problem& pr, const kernels::mask_view& mask,
                                  std::int64_t q_len, std::int64_t k_len) {
    kernels::attention_shape s;
    s.q_len = q_len;
    s.k_len = k_len;
    s.head_dim = pr.head_dim;
    s.causal = pr.causal;
    s.mask = mask;
    return s;
}

std::vector<float> rows_of(tensor_id id, std::uint64_t seed, const attention_problem& pr,
                           std::int64_t b, std::int64_t h, const std::vector<std::int64_t>& pos) {
    std::vector<float> out(pos.size() * static_cast<std::size_t>(pr.head_dim));
    fill_head_rows(id, seed, pr, b, h, pos, out.data());
    return out;
}

/// A group's inputs on the executor that every head of it reads.
struct group_inputs {
    std::vector<std::int64_t> all;
    std::vector<float> k, v; ///< every row of the kv head
    dev_buffer<unsigned char> k_dev, v_dev;
    dev_positions all_dev;
};

/// The single-rank computation of a head's sampled query rows: O, LSE and (backward) dQ.
struct single_rows {
    std::vector<float> o, lse, dq;
};

single_rows single_query_rows(kernels::executor& exec, const attention_problem& pr,
                              const kernels::attention_shape& s, const std::vector<float>& q,
                              const std::vector<float>& d_o, const dev_positions& rows,
                              const group_inputs& in) {
    const auto n = static_cast<std::size_t>(s.q_len), d = static_cast<std::size_t>(s.head_dim);
    const dev_buffer<unsigned char> q_dev = upload_as(exec, pr.type, q);
    dev_buffer<float> o(exec, n * d), lse(exec, n);
    kernels::attention_fwd_init(exec, s, o.data(), lse.data());
    kernels::attention_fwd(exec, s, pr.type, q_dev.data(), in.k_dev.data(), in.v_dev.data(),
                           rows.view(), in.all_dev.view(), o.data(), lse.data(),
                           kernels::attention_split::whole, {});
    if (pr.merge_in_dtype) // one block: the result stored in the dtype once
        kernels::round_values(exec, pr.type, n * d, o.data());
    single_rows out;
    if (pr.backward) {
        const dev_buffer<unsigned char> do_dev = upload_as(exec, pr.type, d_o);
        const auto kv = static_cast<std::size_t>(s.k_len) * d;
        dev_buffer<float> delta(exec, n), dq(exec, n * d), dk(exec, kv), dv(exec, kv);
        kernels::attention_bwd_delta(exec, s, pr.type, o.data(), do_dev.data(), delta.data());
        exec.zero(dq.data(), dq.bytes());
        exec.zero(dk.data(), dk.bytes());
        exec.zero(dv.data(), dv.bytes());
        kernels::attention_bwd(exec, s, pr.type, q_dev.data(), in.k_dev.data(), in.v_dev.data(),
                               do_dev.data(), lse.data(), delta.data(), rows.view(),
                               in.all_dev.view(), dq.data(), dk.data(), dv.data(),
                               kernels::attention_split::whole, {});
        out.dq = dq.download();
    }
    out.o = o.download();
    out.lse = lse.download();
    return out;
}

/// Head `head` of batch `b`: its sampled query rows against fp64 and the single-rank run.
void query_side(kernels::executor& exec, const attention_problem& pr, std::uint64_t seed,
                const kernels::mask_view& mask, const samples& smp, const sampled_values& v,
                std::int64_t b, std::int64_t head, const group_inputs& in, accuracy_tallies& t) {
    const std::int64_t bh = b * pr.heads + head, d = pr.head_dim, qw = smp.q_width(pr);
    const std::vector<std::int64_t>& rows = smp.q_rows[static_cast<std::size_t>(bh)];
    const auto n = static_cast<std::int64_t>(rows.size());
    const std::vector<float> q = rows_of(tensor_id::q, seed, pr, b, head, rows);
    const std::vector<float> d_o =
        pr.backward ? rows_of(tensor_id::d_out, seed, pr, b, head, rows) : std::vector<float>{};
    const kernels::attention_shape s = one_head(pr, mask, n, pr.seq_len);
    const kernels::reference::fp64_query_rows f = kernels::reference::attention_rows_fp64(
        s, q.data(), in.k.data(), in.v.data(), pr.backward ? d_o.data() : nullptr, rows.data(),
        in.all.data());
    const single_rows one = single_query_rows(exec, pr, s, q, d_o, dev_positions(exec, rows), in);
    auto& dist = t.dist;
    auto& single = t.single;
    for (std::int64_t i = 0; i < n; ++i) {
        const float* slot = v.q.data() + (bh * smp.nq + i) * qw;
        const auto r = static_cast<std::size_t>(i);
        dist[int(acc_tensor::lse)].add(slot[d], f.lse[r]);
        single[int(acc_tensor::lse)].add(one.lse[r], f.lse[r]);
        for (std::int64_t x = 0; x < d; ++x) {
            const auto e = static_cast<std::size_t>(i * d + x);
            dist[int(acc_tensor::o)].add(slot[x], f.o[e]);
            single[int(acc_tensor::o)].add(one.o[e], f.o[e]);
            if (!pr.backward)
                continue;
            dist[int(acc_tensor::dq)].add(slot[d + 1 + x], f.dq[e]);
            single[int(acc_tensor::dq)].add(one.dq[e], f.dq[e]);
        }
    }
}

/// The kv head of group (b, kvh): its sampled keys' dK, dV from every query row of the group's
/// heads, in fp64 and by the single-rank kernels, both on the distributed row statistics.
void key_side(kernels::executor& exec, const attention_problem& pr, std::uint64_t seed,
              const kernels::mask_view& mask, const samples& smp, const sampled_values& v,
              std::int64_t b, std::int64_t kvh, const group_inputs& in, accuracy_tallies& t) {
    const std::int64_t bk = b * pr.kv_heads + kvh, d = pr.head_dim, s_len = pr.seq_len;
    const std::vector<std::int64_t>& keys = smp.k_rows[static_cast<std::size_t>(bk)];
    const auto m = static_cast<std::int64_t>(keys.size());
    const std::vector<float> k = rows_of(tensor_id::k, seed, pr, b, kvh, keys);
    const std::vector<float> vv = rows_of(tensor_id::v, seed, pr, b, kvh, keys);
    const kernels::attention_shape s = one_head(pr, mask, s_len, m);
    const auto md = static_cast<std::size_t>(m * d);
    std::vector<double> dk(md, 0.0), dv(md, 0.0);
    const dev_buffer<unsigned char> k_dev = upload_as(exec, pr.type, k),
                                    v_dev = upload_as(exec, pr.type, vv);
    const dev_positions key_pos(exec, keys);
    dev_buffer<float> dk1(exec, md), dv1(exec, md), dq1(exec, static_cast<std::size_t>(s_len * d));
    exec.zero(dk1.data(), dk1.bytes());
    exec.zero(dv1.data(), dv1.bytes());
    const std::int64_t group = pr.heads / pr.kv_heads;
    for (std::int64_t head = kvh * group; head < (kvh + 1) * group; ++head) {
        const auto row0 = static_cast<std::size_t>((b * pr.heads + head) * s_len);
        const std::vector<float> q = rows_of(tensor_id::q, seed, pr, b, head, in.all);
        const std::vector<float> d_o = rows_of(tensor_id::d_out, seed, pr, b, head, in.all);
        const std::vector<float> lse(v.lse.begin() + row0, v.lse.begin() + row0 + s_len);
        const std::vector<float> delta(v.delta.begin() + row0, v.delta.begin() + row0 + s_len);
        const std::vector<double> lse64(lse.begin(), lse.end()),
            delta64(delta.begin(), delta.end());
        kernels::reference::key_grads_fp64(s, q.data(), d_o.data(), {lse64.data(), delta64.data()},
                                           k.data(), vv.data(), in.all.data(), keys.data(),
                                           dk.data(), dv.data());
        const dev_buffer<unsigned char> q_dev = upload_as(exec, pr.type, q),
                                        do_dev = upload_as(exec, pr.type, d_o);
        const dev_buffer<float> lse_dev(exec, lse), delta_dev(exec, delta);
        exec.zero(dq1.data(), dq1.bytes());
        kernels::attention_bwd(exec, s, pr.type, q_dev.data(), k_dev.data(), v_dev.data(),
                               do_dev.data(), lse_dev.data(), delta_dev.data(), in.all_dev.view(),
                               key_pos.view(), dq1.data(), dk1.data(), dv1.data(),
                               kernels::attention_split::whole, {});
    }
    const std::vector<float> dk_one = dk1.download(), dv_one = dv1.download();
    for (std::int64_t j = 0; j < m; ++j) {
        const float* slot = v.k.data() + (bk * smp.nk + j) * 2 * d;
        for (std::int64_t x = 0; x < d; ++x) {
            const auto e = static_cast<std::size_t>(j * d + x);
            t.dist[int(acc_tensor::dk)].add(slot[x], dk[e]);
            t.dist[int(acc_tensor::dv)].add(slot[d + x], dv[e]);
            t.single[int(acc_tensor::dk)].add(dk_one[e], dk[e]);
            t.single[int(acc_tensor::dv)].add(dv_one[e], dv[e]);
        }
    }
}

} // namespace

samples draw_samples(const attention_problem& pr, std::uint64_t seed, std::int64_t sample) {
    samples smp;
    smp.nq = std::min(sample, pr.seq_len);
    smp.nk = pr.backward ? smp.nq : 0;
    const std::uint64_t stream_seed = kernels::mix64(seed ^ 0xacc0ac1ull);
    for (std::int64_t bh = 0; bh < pr.batch * pr.heads; ++bh)
        smp.q_rows.push_back(kernels::sample_rows(pr.seq_len, smp.nq, stream_seed,
                                                  2 * static_cast<std::uint64_t>(bh)));
    for (std::int64_t bk = 0; pr.backward && bk < pr.batch * pr.kv_heads; ++bk)
        smp.k_rows.push_back(kernels::sample_rows(pr.seq_len, smp.nk, stream_seed,
                                                  2 * static_cast<std::uint64_t>(bk) + 1));
    return smp;
}

void measure_group(kernels::executor& exec, const attention_problem& pr, std::uint64_t seed,
                   const kernels::mask_view& mask, const samples& smp, const sampled_values& v,
                   std::int64_t group, accuracy_tallies& t) {
    const std::int64_t b = group / pr.kv_heads, kvh = group % pr.kv_heads;
    group_inputs in;
    in.all = kernels::all_positions(pr.seq_len);
    in.k = rows_of(tensor_id::k, seed, pr, b, kvh, in.all);
    in.v = rows_of(tensor_id::v, seed, pr, b, kvh, in.all);
    in.k_dev = upload_as(exec, pr.type, in.k);
    in.v_dev = upload_as(exec, pr.type, in.v);
    in.all_dev = dev_positions(exec, in.all);
    const std::int64_t heads = pr.heads / pr.kv_heads;
    for (std::int64_t head = kvh * heads; head < (kvh + 1) * heads; ++head)
        query_side(exec, pr, seed, mask, smp, v, b, head, in, t);
    if (pr.backward)
        key_side(exec, pr, seed, mask, smp, v, b, kvh, in, t);
}

} // namespace ringscale::jobs::acc_detail
