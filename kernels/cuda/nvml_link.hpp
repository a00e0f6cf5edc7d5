// The link between two GPUs of one node as NVML sees it: NVLink, or the PCIe path named as
// `nvidia-smi topo -m` names it. NVML (libnvidia-ml.so.1) ships with the driver, not the
// toolkit, so it is loaded at run time and nothing links it; without it the link is "".
#pragma once

#include <string>

namespace ringscale::kernels::cuda {

/// nvidia-smi's name of an NVML topology level (nvmlGpuTopologyLevel_t): PIX one PCIe switch,
/// PXB several switches, PHB a host bridge, NODE within a NUMA node, SYS across sockets;
/// "" for a level NVML does not define.
std::string pcie_path_name(int level);

/// "NVLink" or "PCIe <path>" between the GPUs at PCI bus ids `bus_a` and `bus_b`
/// (cudaDeviceGetPCIBusId's form), or "" when NVML cannot be loaded or does not say.
std::string nvml_link(const std::string& bus_a, const std::string& bus_b);

} // namespace ringscale::kernels::cuda
