// What the launcher records about the GPU a rank is bound to (/meta and /ranks), and the
// free memory the plan-time estimate compares against. Free of CUDA types; without CUDA the
// stub (gpu_info_stub.cpp) throws not_compiled_error.
#pragma once

#include <cstdint>
#include <string>

namespace ringscale::kernels::cuda {

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

/// The current device's description. Throws a cuda error when there is none.
gpu_info current_gpu_info();

/// Free bytes of device memory on the current device (cudaMemGetInfo).
std::uint64_t device_free_bytes();

/// "13.0" from 13000 (CUDA's version integers).
inline std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace ringscale::kernels::cuda
