#include "src/engine/metadata.hpp"

#include "comm/mpi_communicator.hpp"
#include "kernels/blas_core.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <pwd.h>
#include <unistd.h>

namespace ringscale {

const char* build_cxxflags();

namespace {

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0)
            return line.substr(line.find(':') + 2);
    return "unknown";
}

std::string executable_path() {
    char buf[4096] = {0};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "unknown";
}

std::string user_name() {
    if (const passwd* pw = getpwuid(getuid()))
        return pw->pw_name;
    return env_or("USER", "unknown");
}

std::string mpi_library() {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    MPI_Get_library_version(text, &len);
    std::string s(text, static_cast<std::size_t>(len));
    s = s.substr(0, s.find('\n'));
    while (!s.empty() && (s.back() == ',' || s.back() == ' ' || s.back() == '\0'))
        s.pop_back();
    return s;
}

std::vector<std::string> gather_hostnames(comm::communicator& world) {
    char name[256] = {0};
    gethostname(name, sizeof(name) - 1);
    return gather_strings(world, name);
}

} // namespace

std::vector<std::string> gather_strings(comm::communicator& world, const std::string& mine) {
    constexpr std::size_t width = 256; // fixed-width records; longer strings are cut
    std::vector<std::int32_t> record(width / 4, 0);
    mine.copy(reinterpret_cast<char*>(record.data()), std::min(mine.size(), width - 1));
    std::vector<std::int32_t> all(record.size() * static_cast<std::size_t>(world.size()));
    world.all_gather(record.data(), all.data(), record.size(), comm::dtype::i32);
    std::vector<std::string> out;
    for (int r = 0; r < world.size(); ++r)
        out.emplace_back(reinterpret_cast<const char*>(all.data() + r * record.size()));
    return out;
}

void local_rank_info(int& local_rank, int& local_size) {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
}

run_metadata collect_metadata(comm::communicator& world, const launch_config& cfg,
                              const timer_info& timer, int threads_per_rank) {
    run_metadata md;
    local_rank_info(md.my_local_rank, md.my_local_size);
    const auto names = gather_hostnames(world);
    std::int32_t lr = md.my_local_rank;
    md.local_rank.resize(static_cast<std::size_t>(world.size()));
    world.all_gather(&lr, md.local_rank.data(), 1, comm::dtype::i32);
    for (const auto& n : names) {
        auto it = std::find(md.hosts.begin(), md.hosts.end(), n);
        if (it == md.hosts.end()) {
            md.hosts.push_back(n);
            it = md.hosts.end() - 1;
        }
        md.host_index.push_back(static_cast<std::int32_t>(it - md.hosts.begin()));
    }
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    auto& a = md.attrs;
    a[schema::meta_attr::user] = user_name();
    a[schema::meta_attr::launchdate] = static_cast<std::int64_t>(std::time(nullptr));
    a[schema::meta_attr::cluster] =
        env_or("SLURM_CLUSTER_NAME", names.empty() ? "unknown" : names.front());
    a[schema::meta_attr::jobsize] = static_cast<std::int64_t>(world.size());
    a[schema::meta_attr::numhosts] = static_cast<std::int64_t>(md.hosts.size());
    a[schema::meta_attr::mpi_library] = mpi_library();
    a[schema::meta_attr::mpi_library_version] = fmt::format("MPI {}.{}", major, minor);
#if defined(__clang__)
    a[schema::meta_attr::compiler] = std::string("clang");
#else
    a[schema::meta_attr::compiler] = std::string("gcc");
#endif
    a[schema::meta_attr::compiler_version] = std::string(__VERSION__);
    a[schema::meta_attr::cxxflags] = std::string(build_cxxflags());
    a[schema::meta_attr::executable] = executable_path();
    a[schema::meta_attr::slurm_job_id] = env_or("SLURM_JOB_ID", "");
    a[schema::attr::device] = std::string(to_string(cfg.device));
    a[schema::meta_attr::device_name] =
        cfg.device == device_kind::cpu ? cpu_model() : std::string("unknown");
    a[schema::meta_attr::blas_core] = kernels::blas_core();
    a[schema::meta_attr::linear_gemm] = kernels::linear_gemm();
    a[schema::meta_attr::cuda_version] = std::string("");
    a[schema::meta_attr::nccl_version] = std::string("");
    a[schema::attr::threads_per_rank] = static_cast<std::int64_t>(threads_per_rank);
    a[schema::meta_attr::timer] = std::string("std::chrono::steady_clock");
    a[schema::meta_attr::timer_resolution_s] = timer.resolution_s;
    a[schema::meta_attr::timer_overhead_s] = timer.overhead_s;
    a[schema::meta_attr::sync] =
        std::string("MPI_Barrier before each iteration; slowest rank is the step time");
    for (const auto& [key, value] : cfg.labels)
        a[schema::meta_attr::label_prefix + key] = value;
    return md;
}

} // namespace ringscale
