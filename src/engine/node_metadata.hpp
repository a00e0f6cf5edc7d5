// What /meta says about the nodes and the links between them: every host's network interfaces
// with their link speed (sysfs), the MPI transport Open MPI reports (its MCA selection, read
// through MPI_T), and on GPUs the peer access between each node's GPUs (CUDA runtime).
#pragma once

#include "comm/communicator.hpp"
#include "src/engine/metadata.hpp"

#include <string>

namespace ringscale {

/// The network interfaces under `sysfs_net` (one directory per interface, as
/// /sys/class/net), loopback left out, in name order: "eth0 10000 Mbit/s, veth1 unknown".
/// A speed the kernel does not know (no file, unreadable, -1) stays "unknown". "" when there
/// are none.
std::string net_interfaces(const std::string& sysfs_net = "/sys/class/net");

/// The MCA parameters that choose Open MPI's transports, as set (pml, mtl, btl,
/// btl_tcp_if_include; "^x" excludes x): "pml=ob1; btl=tcp,self,vader". "unknown" where the
/// MPI library reports none of them (not Open MPI, or MPI_T unavailable).
std::string mpi_transport();

/// Collective over `world`: /meta's mpi_transport, and per host (as /meta/hosts lists them,
/// from each host's first rank) net_interfaces and, with `gpu`, the peer access between the
/// host's visible GPUs.
void add_node_metadata(run_metadata& md, comm::communicator& world, bool gpu);

} // namespace ringscale
