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

/// OpenBLAS on one thread while this lives (our own threads each call it on their own block,
/// or a probe must time one core), the count it had back afterwards, however the scope ends.
class serial_blas {
  public:
    serial_blas();
    ~serial_blas();
    serial_blas(const serial_blas&) = delete;
    serial_blas& operator=(const serial_blas&) = delete;
    /// The count before: the rank's thread budget.
    int threads() const { return m_threads; }

  private:
    int m_threads;
};

} // namespace ringscale::kernels
