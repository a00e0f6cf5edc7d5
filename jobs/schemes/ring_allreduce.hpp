// A non-blocking ring all-reduce (sum of fp32) over a host-memory communicator's point-to-point
// messages: a ring reduce-scatter, then a ring all-gather, both in the output buffer, reducing
// on the calling rank's core as the pieces arrive. DDP's bucket all-reduce on the CPU.
//
// Why not the communicator's iallreduce: Open MPI 4.1's non-blocking all-reduce (libnbc) takes
// its binomial algorithm below 4 ranks, a reduce to rank 0 and a broadcast back, so each byte
// crosses a link twice in turn: on 2 emulated nodes at 1 Gbit/s a 32 MiB iallreduce took
// 559 ms against 286 ms for the blocking MPI_Allreduce and 281 ms for libnbc's own ring
// (tests/bench/README.md). The ring sends 2 (P-1)/P of the buffer from every rank at once and
// adds (P-1)/P of it on each, whatever P.
#pragma once

#include "comm/communicator.hpp"

#include <cstddef>

namespace ringscale::jobs::schemes {

/// Collective over `c` (host memory; every rank posts it with the same count and tag): `recv`
/// [n] = the sum over ranks of `send` [n]. Block k is [k n / P, (k+1) n / P). 2 (P-1) rounds of
/// isendrecv to rank+1 / from rank-1 with tag `tag`; the returned request's test() finishes
/// the round in flight, adds this rank's block to what arrived and posts the next, so a caller
/// that tests between its computations moves the reduction along. `send` and `recv` must stay
/// alive and `recv` untouched until the request completes; they must not overlap. Requests
/// with distinct tags may be in flight together. Each block's sum is taken in ring order
/// (ranks k+1, k+2, ..., k for block k), not rank order; every rank gets the same bits.
comm::request_ptr ring_allreduce(comm::communicator& c, const float* send, float* recv,
                                 std::size_t n, int tag);

/// Floats rank `rank` of `ranks` sends in ring_allreduce of `n`: every block but its own in the
/// reduce-scatter, every block but rank+1's in the all-gather (none on one rank).
std::size_t ring_allreduce_floats_sent(std::size_t n, int ranks, int rank);

} // namespace ringscale::jobs::schemes
