// The fp64 reference on sampled rows (DESIGN.md, "Accuracy against fp64"): attention of a few
// query rows of one head against all its keys, and the key gradients of a few key rows over
// all query rows, in double throughout (scores, softmax, products and sums; OpenBLAS dgemm
// over chunks of rows, so the cost is rows x S x D and S may reach 1M). The inputs are the
// values a run computed on (already rounded to its dtype), widened exactly to double.
//
// Each call is one head: shape.heads = shape.kv_heads = 1; visibility, the softmax scale and
// positions follow kernels/attention_shape.hpp. A query row with no visible key gets O = 0,
// LSE = -inf and no gradient, as in every kernel.
#pragma once

#include "kernels/attention_shape.hpp"

#include <cstdint>
#include <vector>

namespace ringscale::kernels::reference {

/// fp64 results of n query rows: O [n, D], LSE [n] (natural log), and with dO also
/// delta [n] = rowsum(dO * O) and dQ [n, D].
struct fp64_query_rows {
    std::vector<double> o, lse, delta, dq;
};

/// O, LSE (and, when d_o is not null, delta and dQ) of the shape.q_len query rows q [n, D] at
/// positions q_pos against all shape.k_len keys k, v [S, D] at k_pos. d_o [n, D] or null.
/// Caller owns the inputs. Single head (config_error otherwise).
fp64_query_rows attention_rows_fp64(const attention_shape& shape, const float* q, const float* k,
                                    const float* v, const float* d_o, const std::int64_t* q_pos,
                                    const std::int64_t* k_pos);

/// The softmax statistics of query rows a key-gradient reference takes: LSE [n] (natural log;
/// -inf: the row has no gradient) and delta [n] = rowsum(dO * O).
struct row_stats {
    const double* lse = nullptr;
    const double* delta = nullptr;
};

/// ADDS to dk, dv [m, D] (double, caller-owned) the gradients of the shape.k_len key rows
/// k, v [m, D] at k_pos from the shape.q_len query rows q, d_o [n, D] at q_pos, given each query
/// row's statistics: dV_j += sum_i P_ij dO_i, dK_j += sum_i P_ij (dP_ij - delta_i) scale q_i,
/// with P_ij = exp(scale q_i.k_j - LSE_i) and dP_ij = dO_i.v_j. Exact when the statistics are
/// (attention_rows_fp64 over every query row); call once per query head of a kv head's group
/// (and per slice of query rows) to sum them. Single head.
void key_grads_fp64(const attention_shape& shape, const float* q, const float* d_o,
                    const row_stats& stats, const float* k, const float* v,
                    const std::int64_t* q_pos, const std::int64_t* k_pos, double* dk, double* dv);

} // namespace ringscale::kernels::reference
