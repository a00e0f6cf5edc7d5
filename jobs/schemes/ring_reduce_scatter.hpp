// A non-blocking ring reduce-scatter (sum of fp32) over a host-memory communicator's
// point-to-point messages, reducing on the calling rank's core as the pieces arrive.
//
// Why not the communicator's ireduce_scatter: Open MPI's non-blocking reduce-scatter (libnbc)
// reduces the whole buffer at rank 0 and then scatters it, allocating twice the buffer on every
// call. At P = 2 with one core a rank, rank 0 then copies and adds the whole gradient while
// rank 1 waits, and both fault in fresh pages every step. The ring moves (P-1)/P of the buffer
// through every rank and adds as much on each: the work is the same on every rank and needs no
// memory beyond two pieces (none at P <= 2).
#pragma once

#include "comm/communicator.hpp"

#include <cstddef>

namespace ringscale::jobs::schemes {

/// Floats of scratch ring_reduce_scatter needs for `count_per_rank` over `ranks` ranks: two
/// pieces for P > 2 (a partial sum received while the previous one is sent), none otherwise.
std::size_t ring_scratch_floats(std::size_t count_per_rank, int ranks);

/// Collective over `c` (host memory; every rank posts it with the same count and tag): `recv`
/// [count_per_rank] = the sum over ranks of block rank() of `send` [size() x count_per_rank].
/// P-1 rounds of isendrecv to rank+1 / from rank-1 with tag `tag`; the returned request's test()
/// finishes the round in flight, adds this rank's block to what arrived and posts the next, so
/// a caller that tests between units moves the reduction along. `send`, `recv` and `scratch`
/// [ring_scratch_floats] must stay alive and untouched until the request completes; `recv` must
/// not overlap `send`. Requests with distinct tags may be in flight together. Block r's sum
/// is taken in ring order (ranks r+1, r+2, ..., r), not rank order.
comm::request_ptr ring_reduce_scatter(comm::communicator& c, const float* send, float* recv,
                                      std::size_t count_per_rank, float* scratch, int tag);

} // namespace ringscale::jobs::schemes
