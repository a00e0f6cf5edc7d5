// The GPU a rank runs on, as the engine sees it: how many are visible, binding one, what the
// launcher records about it (/meta and /ranks), and the free memory the plan-time estimate
// compares against. Free of CUDA types; implemented in kernels/cuda/gpu.cpp over the CUDA
// runtime helpers, and where CUDA is not built by the not-compiled hooks (no GPU visible,
// everything else throws not_compiled_error).
#pragma once

#include <cstdint>
#include <string>

namespace ringscale::kernels {

struct gpu_info {
    int index = -1;         ///< cudaGetDevice() in this process (after CUDA_VISIBLE_DEVICES)
    std::string name;       ///< e.g. "NVIDIA H100 80GB HBM3"
    std::string uuid;       ///< "GPU-xxxxxxxx-xxxx-...", as nvidia-smi prints it
    std::string pci_bus_id; ///< "0000:18:00.0"
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::uint64_t memory_bytes = 0;
    int max_sm_clock_mhz = 0;  ///< peak SM clock
    int max_mem_clock_mhz = 0; ///< peak memory clock
    int mem_bus_width_bits = 0;
    int driver_version = 0;  ///< cudaDriverGetVersion, e.g. 13000
    int runtime_version = 0; ///< cudaRuntimeGetVersion
};

/// Number of visible CUDA devices; 0 when there is no driver or device, or CUDA was not
/// built. Never throws.
int gpu_count();

/// Select this process's device: local_rank % visible devices (ranks of a node may share
/// one). Throws config_error when no device is visible.
void bind_gpu(int local_rank, int local_size);

/// The current device's description. Throws a cuda error when there is none.
gpu_info current_gpu_info();

/// Free bytes of device memory on the current device (cudaMemGetInfo).
std::uint64_t gpu_free_bytes();

/// The link and peer access between every pair of this process's visible GPUs: the link from
/// NVML when the driver has it (NVLink, or PCIe PIX/PXB/PHB/NODE/SYS as nvidia-smi topo names
/// the path; else unknown), access from the CUDA runtime (cudaDeviceGetP2PAttribute):
/// "0-1 link=NVLink access=1 perf_rank=0 atomics=1, 0-2 ..." for i < j;
/// "" with fewer than two GPUs or without CUDA. Never throws.
std::string gpu_peer_topology();

/// A GPU's state at one instant, through NVML (loaded at run time with the driver).
struct gpu_sample {
    bool known = false;         ///< false: NVML could not say (why says why)
    std::string why;            ///< "" when known
    double sm_clock_mhz = 0;    ///< current SM clock
    std::uint64_t throttle = 0; ///< nvmlClocksThrottleReason bits (power cap 0x4, HW slowdown
                                ///< 0x8, SW thermal 0x20, HW thermal 0x40, power brake 0x80)
    int processes = 0;          ///< compute processes on the GPU (every process, ours included)
};

/// The state of the GPU at PCI bus id `pci_bus_id` (gpu_info::pci_bus_id). Never throws:
/// without NVML, or where CUDA is not built, known = false and `why` says so.
gpu_sample sample_gpu(const std::string& pci_bus_id);

/// "13.0" from 13000 (CUDA's version integers).
inline std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace ringscale::kernels
