#include "threads.hpp"

#include <algorithm>
#include <cblas.h>
#include <sched.h>
#include <unistd.h>

namespace ringscale::kernels {

int cores_available() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return std::max(1, CPU_COUNT(&set));
    return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
}

int threads_per_rank(int requested, int local_ranks) {
    if (requested > 0)
        return requested;
    const long online = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const int share = static_cast<int>(online / std::max(1, local_ranks));
    return std::max(1, std::min(share, cores_available()));
}

void set_blas_threads(int threads) {
    openblas_set_num_threads(std::max(1, threads));
}

int blas_threads() {
    return openblas_get_num_threads();
}

serial_blas::serial_blas() : m_threads(blas_threads()) {
    if (m_threads > 1)
        set_blas_threads(1);
}

serial_blas::~serial_blas() {
    if (m_threads > 1)
        set_blas_threads(m_threads);
}

} // namespace ringscale::kernels
