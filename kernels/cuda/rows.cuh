// CUDA data movement for the executor's kernels (kernels/kernels.inc): rows of [outer, rows,
// row_bytes] tensors taken from or put at indexed places (Ulysses' exchanges, layouts), and
// the elementwise sum the ring's dK/dV partial sums need. Declarations only, free of CUDA
// types; only the CUDA backend (backend_attention.cpp) calls them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cuda {

/// dst[o][t] = src[o][index[t]] (take) or dst[o][index[t]] = src[o][t] (put), for o < outer
/// and t < count, rows of `row_bytes` (a multiple of 4). `index` is a DEVICE array of count
/// int64; `other_rows` is the row count of the indexed side. DEVICE pointers, caller-owned,
/// not overlapping; asynchronous on `stream` (a cudaStream_t).
void take_rows_cuda(std::size_t row_bytes, std::int64_t outer, std::int64_t other_rows,
                    const std::int64_t* index, std::int64_t count, const void* src, void* dst,
                    void* stream);
void put_rows_cuda(std::size_t row_bytes, std::int64_t outer, std::int64_t other_rows,
                   const std::int64_t* index, std::int64_t count, const void* src, void* dst,
                   void* stream);

/// out[k] = a[k] + b[k] for k < n (fp32); out may alias a or b. DEVICE pointers; async.
void add_cuda(std::size_t n, const float* a, const float* b, float* out, void* stream);

} // namespace ringscale::kernels::cuda
