#include "memory.hpp"

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>

namespace ringscale {

namespace {
std::atomic<std::uint64_t> g_current{0};
std::atomic<std::uint64_t> g_peak{0};

std::uint64_t read_kib_field(const char* path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) == 0) {
            std::istringstream fields(line.substr(key.size()));
            std::uint64_t kib = 0;
            fields >> kib;
            return kib * 1024;
        }
    }
    return 0;
}
} // namespace

std::uint64_t host_memory::peak_bytes() {
    return g_peak.load();
}
void host_memory::reset_peak() {
    g_peak.store(g_current.load());
}

void host_memory::on_alloc(std::uint64_t bytes) {
    const std::uint64_t now = g_current.fetch_add(bytes) + bytes;
    std::uint64_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
}

void host_memory::on_free(std::uint64_t bytes) {
    g_current.fetch_sub(bytes);
}

void* tracked_alloc(std::size_t bytes) {
    void* p = ::operator new(bytes, std::align_val_t(64));
    host_memory::on_alloc(bytes);
    return p;
}

void tracked_free(void* p, std::size_t bytes) noexcept {
    ::operator delete(p, std::align_val_t(64));
    host_memory::on_free(bytes);
}

std::uint64_t peak_rss_bytes() {
    return read_kib_field("/proc/self/status", "VmHWM:");
}

bool reset_peak_rss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    return static_cast<bool>(out);
}

std::uint64_t available_host_bytes() {
    return read_kib_field("/proc/meminfo", "MemAvailable:");
}

} // namespace ringscale
