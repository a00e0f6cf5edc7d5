#include "kernels/gpu.hpp"

#include "nvml_link.hpp"

#include "src/base/cuda_runtime/cuda_check.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace ringscale::kernels {

namespace {

std::string uuid_text(const cudaUUID_t& id) {
    const auto* b = reinterpret_cast<const unsigned char*>(id.bytes);
    std::string s = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s += '-';
        s += fmt::format("{:02x}", b[i]);
    }
    return s;
}

int attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
        cudaGetLastError(); // an attribute this driver lacks reads as 0
        return 0;
    }
    return value;
}

/// cudaDeviceGetPCIBusId's id of `device`, "" when the runtime does not say.
std::string bus_id(int device) {
    char id[32] = {};
    if (cudaDeviceGetPCIBusId(id, sizeof id, device) != cudaSuccess) {
        cudaGetLastError();
        return std::string();
    }
    return std::string(id);
}

} // namespace

int gpu_count() {
    return cuda_runtime::cuda_device_count();
}

std::string gpu_peer_topology() {
    const int n = gpu_count();
    std::string out;
    auto p2p = [](cudaDeviceP2PAttr attr, int a, int b) {
        int value = 0;
        if (cudaDeviceGetP2PAttribute(&value, attr, a, b) != cudaSuccess) {
            cudaGetLastError(); // unknown reads as -1
            return -1;
        }
        return value;
    };
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b) {
            const std::string link = cuda::nvml_link(bus_id(a), bus_id(b));
            out += fmt::format("{}{}-{} link={} access={} perf_rank={} atomics={}",
                               out.empty() ? "" : ", ", a, b, link.empty() ? "unknown" : link,
                               p2p(cudaDevP2PAttrAccessSupported, a, b),
                               p2p(cudaDevP2PAttrPerformanceRank, a, b),
                               p2p(cudaDevP2PAttrNativeAtomicSupported, a, b));
        }
    return out;
}

void bind_gpu(int local_rank, int local_size) {
    cuda_runtime::bind_local_device(local_rank, local_size, true);
}

gpu_info current_gpu_info() {
    gpu_info g;
    RINGSCALE_CUDA_CALL(cudaGetDevice(&g.index));
    cudaDeviceProp prop{};
    RINGSCALE_CUDA_CALL(cudaGetDeviceProperties(&prop, g.index));
    g.name = prop.name;
    g.uuid = uuid_text(prop.uuid);
    g.pci_bus_id = bus_id(g.index);
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.sm_count = prop.multiProcessorCount;
    g.memory_bytes = prop.totalGlobalMem;
    g.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, g.index) / 1000;
    g.max_mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, g.index) / 1000;
    g.mem_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, g.index);
    RINGSCALE_CUDA_CALL(cudaDriverGetVersion(&g.driver_version));
    RINGSCALE_CUDA_CALL(cudaRuntimeGetVersion(&g.runtime_version));
    return g;
}

std::uint64_t gpu_free_bytes() {
    std::size_t free_bytes = 0, total = 0;
    RINGSCALE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
}

} // namespace ringscale::kernels
