// Giving up on a file being written when the disk is full (src/base/h5.hpp, file::discard).
#include "h5.hpp"

#include <cstdio>
#include <unistd.h>

namespace ringscale::h5 {

void file::discard() {
    if (!m_h.valid())
        return;
    std::remove(m_path.c_str());
    // HDF5 1.10 cannot close a file whose flush failed (its metadata cache is left in a state
    // every later flush refuses), so its descriptor stays open until the process ends: its
    // storage is released now, so that the discarded file stops filling the disk at once.
    void* vfd = nullptr;
    if (H5Fget_vfd_handle(m_h.id(), H5P_DEFAULT, &vfd) >= 0 && vfd != nullptr) {
        const int failed = ::ftruncate(*static_cast<int*>(vfd), 0);
        (void)failed; // nothing more can be done
    }
    H5Eclear2(H5E_DEFAULT);
    m_h = handle(); // H5Fclose: succeeds where the flush can
    H5Eclear2(H5E_DEFAULT);
}

} // namespace ringscale::h5
