// CUDA kernels the training step needs beyond the nn layers: the embedding lookup and its
// gradient, and the token-major <-> BHSD transposes around attention (the device twins of
// kernels/cpu/embedding.hpp and kernels/cpu/layout_bhsd.hpp). Declarations only, free of CUDA
// types; only the CUDA backend (backend_train.cpp) calls them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cuda {

/// out[t, :] = table[ids[t], :] for t < tokens, as kernels::cpu::embedding_fwd. OVERWRITES out. An
/// id outside [0, vocab) makes its row NaN (never an out-of-bounds read); ids are not checked
/// on the host. DEVICE pointers, caller-owned; asynchronous on `stream` (a cudaStream_t).
void embedding_fwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t dim, const float* table,
                        const std::int32_t* ids, float* out, void* stream);

/// dtable[ids[t], :] += dout[t, :] for t < tokens, as kernels::cpu::embedding_bwd (ACCUMULATES; an
/// id outside [0, vocab) is skipped). Rows that share an id are summed with atomics, so the
/// order of that sum, and its last bits, may differ from run to run. DEVICE pointers; async.
void embedding_bwd_cuda(std::size_t tokens, std::size_t vocab, std::size_t dim,
                        const std::int32_t* ids, const float* dout, float* dtable, void* stream);

/// With `to`: token-major [batch, rows, cols] columns [col0, col0 + heads*d) -> BHSD [batch,
/// heads, rows, d]; without: the inverse into those columns (other columns untouched).
/// DEVICE pointers, not overlapping; asynchronous on `stream`.
void copy_bhsd_cuda(bool to, std::int64_t batch, std::int64_t rows, std::int64_t heads,
                    std::int64_t d, const float* src, std::int64_t cols, std::int64_t col0,
                    float* dst, void* stream);

} // namespace ringscale::kernels::cuda
