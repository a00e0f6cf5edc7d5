#include "nvml_link.hpp"

#include <dlfcn.h>

namespace ringscale::kernels::cuda {

namespace {

// The few NVML entry points used, declared from NVML's documented C API (nvml.h is not part
// of the toolkit here). Values: NVML_SUCCESS 0; NVML_P2P_CAPS_INDEX_NVLINK 2;
// NVML_P2P_STATUS_OK 0; topology levels 0 (internal), 10, 20, 30, 40, 50.
using nvml_device = struct nvml_device_opaque*;
using init_fn = int (*)();
using handle_fn = int (*)(const char*, nvml_device*);
using p2p_fn = int (*)(nvml_device, nvml_device, int, int*);
using ancestor_fn = int (*)(nvml_device, nvml_device, int*);
constexpr int nvml_success = 0;
constexpr int p2p_caps_nvlink = 2;
constexpr int p2p_status_ok = 0;

struct nvml_api {
    init_fn init = nullptr;
    handle_fn handle_by_bus = nullptr;
    p2p_fn p2p_status = nullptr;
    ancestor_fn common_ancestor = nullptr;
    bool ready = false;
};

template <typename F>
F symbol(void* lib, const char* name) {
    return reinterpret_cast<F>(::dlsym(lib, name));
}

// Loaded and initialised once per process; kept for the process's life (NVML is cheap to
// hold, and a shutdown would race other users of the library in the same process).
const nvml_api& api() {
    static const nvml_api loaded = [] {
        nvml_api a;
        void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr)
            return a;
        a.init = symbol<init_fn>(lib, "nvmlInit_v2");
        a.handle_by_bus = symbol<handle_fn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
        a.p2p_status = symbol<p2p_fn>(lib, "nvmlDeviceGetP2PStatus");
        a.common_ancestor = symbol<ancestor_fn>(lib, "nvmlDeviceGetTopologyCommonAncestor");
        a.ready = a.init && a.handle_by_bus && a.p2p_status && a.common_ancestor &&
                  a.init() == nvml_success;
        return a;
    }();
    return loaded;
}

} // namespace

std::string pcie_path_name(int level) {
    switch (level) {
    case 10:
        return "PIX";
    case 20:
        return "PXB";
    case 30:
        return "PHB";
    case 40:
        return "NODE";
    case 50:
        return "SYS";
    default:
        return "";
    }
}

std::string nvml_link(const std::string& bus_a, const std::string& bus_b) {
    const nvml_api& nvml = api();
    if (!nvml.ready)
        return "";
    nvml_device a = nullptr, b = nullptr;
    if (nvml.handle_by_bus(bus_a.c_str(), &a) != nvml_success ||
        nvml.handle_by_bus(bus_b.c_str(), &b) != nvml_success)
        return "";
    int status = -1;
    if (nvml.p2p_status(a, b, p2p_caps_nvlink, &status) == nvml_success && status == p2p_status_ok)
        return "NVLink";
    int level = -1;
    if (nvml.common_ancestor(a, b, &level) != nvml_success)
        return "";
    const std::string path = pcie_path_name(level);
    return path.empty() ? "" : "PCIe " + path;
}

} // namespace ringscale::kernels::cuda
