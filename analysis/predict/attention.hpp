// The work of ringscale's attention schemes, rank by rank: which (query, key) pairs a
// causal mask leaves visible between two ranks' rows under each sequence layout (closed
// forms, so P = 4096 costs nothing), and the work of one attention block, forward or
// backward, in the units the compute figures price. Pure functions of the problem.
#pragma once

#include "cost.hpp"

#include <string>

namespace ringscale::analysis::predict {

/// An attention problem as a case's identity states it (global sizes).
struct attention_problem {
    double seq_len = 0; ///< S
    double batch = 1, heads = 8, kv_heads = 8, head_dim = 64;
    bool causal = true;
    bool backward = false; ///< pass fwd+bwd
    std::string layout = "zigzag";
    double elem_bytes = 4; ///< Q, K, V, dO element size (fp32 4, bf16/fp16 2)
    bool overlap = true;   ///< ring: the next exchange is posted before the block computes
    /// Calls priced by the per-call overhead per block: 1 on a GPU (a kernel launch), 0 on a
    /// CPU, where a block is a function call (predict_attention sets it). On 2 cores, ring
    /// at P=4 made 4x Ulysses' calls and measured the same (11.6 and 10.7 ms at
    /// S=512), where a per-call figure fitted at P <= 2 priced 1 ms a call and predicted +56%.
    double block_calls = 1;
};

/// Visible (query, key) pairs between rank a's rows (queries) and rank b's rows (keys) of an
/// S-token sequence over P ranks: contiguous ranges, zigzag chunks (r, 2P-1-r) or striped
/// (i mod P); every pair when not causal. S must divide by P (2P for zigzag).
double visible_pairs(const std::string& layout, double seq_len, int ranks, int a, int b,
                     bool causal);

/// Visible pairs between the rows of two groups of `u` consecutive ranks (g*u .. g*u+u-1):
/// a hybrid's ring block between Ulysses groups qg and kg.
double group_pairs(const attention_problem& a, int ranks, int u, int qg, int kg);

/// Work of one forward block: q_rows queries of `heads` heads against k_rows keys of
/// `kv_heads` heads with `pairs` visible pairs (no work, no call when 0).
work block_forward(const attention_problem& a, double q_rows, double k_rows, double pairs,
                   double heads, double kv_heads);
/// The backward of the same block: 2.5 x the forward's FLOP, twice its operand traffic.
work block_backward(const attention_problem& a, double q_rows, double k_rows, double pairs,
                    double heads, double kv_heads);

/// Memory-bound work of `bytes` read and written once each (packing, sums, zeroing).
work memory_pass(double bytes);

/// Bytes of one K (or V) block of `rows` rows and `kv_heads` heads in the input type.
double kv_block_bytes(const attention_problem& a, double rows, double kv_heads);

/// Whether S divides over P under the layout ("" when it does, else the reason).
std::string layout_refusal(const attention_problem& a, int ranks);

} // namespace ringscale::analysis::predict
