// MPI implementation of the communicator for host memory.
#pragma once

#include "comm/communicator.hpp"

#include <mpi.h>

namespace ringscale::comm {

/// Throw an mpi error with MPI's own error string when `code` != MPI_SUCCESS.
void mpi_check(int code, const char* call, const char* file, int line);
#define RINGSCALE_MPI_CALL(expr) ::ringscale::comm::mpi_check((expr), #expr, __FILE__, __LINE__)

MPI_Datatype mpi_type(dtype t);

class mpi_communicator final : public communicator {
  public:
    /// Wraps (and duplicates) `comm`; errors are returned to us, not fatal in MPI.
    explicit mpi_communicator(MPI_Comm comm);
    ~mpi_communicator() override;
    mpi_communicator(const mpi_communicator&) = delete;
    mpi_communicator& operator=(const mpi_communicator&) = delete;

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    comm_kind backend() const override { return comm_kind::mpi; }
    memory_space memory() const override { return memory_space::host; }
    MPI_Comm handle() const { return m_comm; }

    RINGSCALE_COMMUNICATOR_OVERRIDES

  private:
    MPI_Comm m_comm = MPI_COMM_NULL;
    int m_rank = 0;
    int m_size = 1;
};

} // namespace ringscale::comm
