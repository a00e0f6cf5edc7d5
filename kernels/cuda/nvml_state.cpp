// kernels/gpu.hpp's sample_gpu: the SM clock, throttle reasons and compute processes of one GPU
// through NVML, loaded at run time (libnvidia-ml.so.1 ships with the driver, not the toolkit;
// nvml_link.cpp loads it the same way). Only counts are read, so no NVML struct layout is
// assumed.
#include "kernels/gpu.hpp"

#include <dlfcn.h>

namespace ringscale::kernels {

namespace {

// NVML's documented C API, declared by hand (nvml.h is not part of the toolkit here).
// NVML_SUCCESS 0, NVML_ERROR_INSUFFICIENT_SIZE 7, NVML_CLOCK_SM 1.
using nvml_device = struct nvml_state_device_opaque*;
using init_fn = int (*)();
using handle_fn = int (*)(const char*, nvml_device*);
using clock_fn = int (*)(nvml_device, int, unsigned int*);
using reasons_fn = int (*)(nvml_device, unsigned long long*);
using procs_fn = int (*)(nvml_device, unsigned int*, void*);
constexpr int nvml_success = 0;
constexpr int nvml_insufficient_size = 7;
constexpr int nvml_clock_sm = 1;

struct nvml_api {
    handle_fn handle_by_bus = nullptr;
    clock_fn clock = nullptr;
    reasons_fn reasons = nullptr;
    procs_fn procs = nullptr;
    std::string why; ///< "" when ready
};

template <typename F>
F symbol(void* lib, const char* name) {
    return reinterpret_cast<F>(::dlsym(lib, name));
}

// Loaded once per process and kept (see nvml_link.cpp).
const nvml_api& api() {
    static const nvml_api loaded = [] {
        nvml_api a;
        void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            const char* err = ::dlerror();
            a.why = std::string("NVML not loaded: ") + (err ? err : "libnvidia-ml.so.1");
            return a;
        }
        const auto init = symbol<init_fn>(lib, "nvmlInit_v2");
        a.handle_by_bus = symbol<handle_fn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
        a.clock = symbol<clock_fn>(lib, "nvmlDeviceGetClockInfo");
        a.reasons = symbol<reasons_fn>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
        if (a.reasons == nullptr)
            a.reasons = symbol<reasons_fn>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
        a.procs = symbol<procs_fn>(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
        if (a.procs == nullptr)
            a.procs = symbol<procs_fn>(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
        if (!init || !a.handle_by_bus || !a.clock || !a.reasons || !a.procs)
            a.why = "NVML lacks the calls for clocks, throttle reasons or processes";
        else if (init() != nvml_success)
            a.why = "NVML did not initialise (nvmlInit_v2 failed)";
        return a;
    }();
    return loaded;
}

} // namespace

gpu_sample sample_gpu(const std::string& pci_bus_id) {
    gpu_sample s;
    const nvml_api& nvml = api();
    if (!nvml.why.empty()) {
        s.why = nvml.why;
        return s;
    }
    nvml_device dev = nullptr;
    if (nvml.handle_by_bus(pci_bus_id.c_str(), &dev) != nvml_success) {
        s.why = "NVML does not know the GPU at PCI bus id " + pci_bus_id;
        return s;
    }
    unsigned int mhz = 0;
    unsigned long long reasons = 0;
    unsigned int count = 0; // asked with no room: NVML answers the count
    const int procs = nvml.procs(dev, &count, nullptr);
    if (nvml.clock(dev, nvml_clock_sm, &mhz) != nvml_success ||
        nvml.reasons(dev, &reasons) != nvml_success ||
        (procs != nvml_success && procs != nvml_insufficient_size)) {
        s.why = "NVML did not report the GPU's clock, throttle reasons or processes";
        return s;
    }
    s.known = true;
    s.sm_clock_mhz = mhz;
    s.throttle = reasons;
    s.processes = static_cast<int>(count);
    return s;
}

} // namespace ringscale::kernels
