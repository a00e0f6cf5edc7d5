// CPU thread budget per rank: ranks on one node share its cores, so BLAS must never
// use all of them in every rank.
#pragma once

namespace ringscale::kernels {

/// Cores this process may run on (its affinity mask), at least 1.
int cores_available();

/// Threads per rank: `requested` when > 0, else cores of the node / ranks on the node,
/// capped by this process's affinity mask; at least 1.
int threads_per_rank(int requested, int local_ranks);

/// Set the thread count of the BLAS library (OpenBLAS) for this process.
void set_blas_threads(int threads);

/// Current BLAS thread count.
int blas_threads();

} // namespace ringscale::kernels
