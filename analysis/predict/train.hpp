// The training step's cost model (jobs/train_*.cpp): the transformer's units (embedding,
// L blocks, head) with their forward and backward work per rank, the context-parallel
// attention inside each block priced by the attention schemes (DP x CP composed), and the
// data-parallel strategy's overlap rule, simulated unit by unit on one compute stream and one
// serial communication channel:
//   ddp:   gradient buckets (head first) all-reduced as the backward completes each one,
//          overlapping the rest of the backward; AdamW on every parameter.
//   zero1: DDP's buckets reduce-scattered as the backward completes each (a ring of P-1
//          sendrecvs on the CPU), AdamW on the 1/P shard, every bucket all-gathered.
//   fsdp:  each unit all-gathered before its forward and backward (the next unit's gather
//          overlapping with prefetch), each unit's gradient reduce-scattered as soon as its
//          backward is done (two scratch buffers), AdamW on the shards.
// Memory per rank follows jobs/train_problem.cpp's accounting.
#pragma once

#include "schemes.hpp"

#include <string>

namespace ringscale::analysis::predict {

struct train_problem {
    double layers = 4, hidden = 512, heads = 8, vocab = 1024;
    double kv_heads = 0;  ///< K/V heads (GQA); 0: heads
    double ffn = 0;       ///< MLP width; 0: 4 x hidden
    bool swiglu = false;  ///< SwiGLU MLP (gate and up projections) instead of GELU
    double seq_len = 512; ///< tokens per sequence
    double tokens = 4096; ///< global tokens per step
    int dp = 1, cp = 1;   ///< resolved at the case's P
    std::string dp_variant = "ddp";
    std::string cp_variant = "ring";
    bool prefetch = false;
    double bucket_bytes = 25.0 * (1 << 20);
    double attn_elem_bytes = 4; ///< attention inputs (bf16 on a GPU)
};

/// The block's widths as kernels/model/params.hpp: K (and V) features, the QKV projection's
/// outputs, the MLP's width and its up projection's outputs (twice the width for SwiGLU).
struct block_widths {
    double kv, qkv, ffn, up;
};
block_widths widths(const train_problem& t);
/// GEMM FLOPs of one block's forward over `tokens` tokens: 2·tokens·(h·(qkv + h + up) + ffn·h).
double block_gemm_flops(const train_problem& t, double tokens);

/// Parameters of unit u (0 embedding, 1..L blocks, L+1 head), as kernels/model_params.cpp.
double unit_params(const train_problem& t, int u);
/// Every parameter.
double total_params(const train_problem& t);

/// Why the problem cannot run at dp x cp ("" when it can).
std::string train_refusal(const train_problem& t);

/// Predict one training step on every rank's `width` core-equivalents.
step_prediction predict_train(const train_problem& t, const placement& where, const figures& f,
                              double width);

/// Bytes per rank the job allocates (host on a CPU, device with `gpu`), without validation.
double train_memory(const train_problem& t, bool gpu);

} // namespace ringscale::analysis::predict
