// How the ranks of one node share its links to other nodes. A node has `node_links` of them
// (NICs; figures::node_links, 0: one per rank, nothing shared). When k of its ranks send
// across nodes at once, each flow runs at beta / max(1, k / node_links): on the emulated
// cluster (one link per node) two ranks sending across get half the link each; on an HGX
// H100 (one NIC per GPU) eight get a NIC each.
// Which exchanges do that: a ring over consecutive ranks puts one flow per node on the link;
// a hybrid's ring across Ulysses groups min(u, ranks per node); an all-to-all, and MPI's
// all-gather and reduce-scatter (Bruck, recursive doubling, linear: every rank exchanges with
// the other nodes' ranks), every rank of the node, each moving the off-node share
// (g - r) / g of its buffer.
#pragma once

#include "cost.hpp"

namespace ringscale::analysis::predict {

/// Factor on an inter-node transfer's time when `flows` ranks of a node send across at once.
double link_share(double flows, const figures& f);

/// Congestion factor of `op` when `flows` ranks of a node send across at once, each moving
/// `flow_bytes`: 1 when the node's links are not shared (link_share 1) or nothing was measured;
/// else figures::congestion interpolated in log bytes, held at the nearest end beyond the
/// measured sizes. Several large flows on one link were measured slower than their share of
/// it (the emulated cluster's 2 ranks per node: 1.0 up to 256 KiB per flow, 1.3-2.0x at
/// 1-2 MiB), so one shared-link figure cannot price both small and large exchanges.
/// A nonblocking call without a curve of its own takes the blocking call's (the nearest measured).
double congestion_factor(coll op, double flow_bytes, double flows, const figures& f,
                         mpi_call call = mpi_call::blocking);

/// `c` with its inter-node transfer time scaled by link_share(flows). The schemes' ring hops
/// take no congestion factor: on the emulated cluster a hybrid's hops (both ranks of a node
/// crossing, staggered by their compute) ran near their share of the link, while the
/// collectives job's sendrecv with every rank crossing at once (--shift node) ran 1.5-2.2x
/// slower than that; priced with that curve the hybrid came out 22-74% slow in three runs of
/// tests/bench/predict_nodes.sh, without it 4-32% fast (the shifted link test still in the
/// calibration, where it informs the links' sharing).
cost shared_inter(const cost& c, double flows, const figures& f);

/// Whether `op` over several nodes sends from every rank of a node at once (allgather,
/// reduce_scatter, alltoall), rather than along one ring.
bool every_rank_crosses(coll op);

/// A node's ranks that send across nodes at once in a sendrecv to rank + `shift` over `group`
/// ranks placed `per_node` to a node in order: 1 for the ring (shift 1), every rank of the
/// node for a shift of per_node (the collectives job's --shift node, a hybrid's ring hop).
int sendrecv_flows(int shift, int group, int per_node);

/// `c` with its intra-node time scaled by the node's ranks per core where they outnumber its
/// CPU cores (figures::node_cores; not on a GPU): MPI's shared-memory transport moves and
/// reduces with the ranks' own cores, so ranks sharing a core share its copy rate.
cost shared_cores(const cost& c, int per_node, const figures& f);

/// A collective over `group` ranks placed `per_node` to a node, as ringscale's jobs and the
/// collectives job run it: inside one node coll_cost intra; over nodes, an every-rank op sends
/// each rank's off-node share (g - per_node) / g over the inter level, shared by the node's
/// per_node flows (times their congestion_factor), while the (per_node - 1) / g
/// staying inside overlaps it (the slower of the two; latency of all g - 1 peers); a sendrecv
/// to rank + shift sends sendrecv_flows flows per node (times their congestion_factor); any
/// other op is a ring with one flow per node.
cost placed_coll_cost(coll op, double bytes, int group, int per_node, const figures& f,
                      mpi_call call = mpi_call::blocking, int shift = 1);

/// Alltoall over `group` ranks of which `per_node` share a node (placed_coll_cost), while
/// `flows` ranks of a node (0: per_node; more when several groups cross at once) send across.
cost alltoall_cost(double bytes, int group, int per_node, const figures& f, int flows = 0);

} // namespace ringscale::analysis::predict
