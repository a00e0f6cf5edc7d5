#include "src/engine/node_metadata.hpp"

#include "kernels/gpu.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mpi.h>
#include <vector>

namespace ringscale {

namespace {

/// The string value of MPI_T control variable `name`, or "" when the library has none.
std::string mpit_text(const std::string& name) {
    int count = 0;
    if (MPI_T_cvar_get_num(&count) != MPI_SUCCESS)
        return "";
    for (int i = 0; i < count; ++i) {
        char cvar[256] = {0}, desc[16] = {0};
        int name_len = sizeof cvar, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum values = MPI_T_ENUM_NULL;
        if (MPI_T_cvar_get_info(i, cvar, &name_len, &verbosity, &type, &values, desc, &desc_len,
                                &bind, &scope) != MPI_SUCCESS ||
            name != cvar || type != MPI_CHAR || bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
        int elems = 0;
        if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &elems) != MPI_SUCCESS || elems <= 0)
            return "";
        std::vector<char> text(static_cast<std::size_t>(elems) + 1, '\0');
        const bool read = MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS;
        MPI_T_cvar_handle_free(&handle);
        return read ? std::string(text.data()) : "";
    }
    return "";
}

/// Collective: every rank's `mine` at any length, in rank order.
std::vector<std::string> gather_texts(comm::communicator& world, const std::string& mine) {
    const std::int64_t length = static_cast<std::int64_t>(mine.size());
    std::int64_t width = 0;
    world.allreduce(&length, &width, 1, comm::dtype::i64, comm::reduce_op::max);
    std::vector<char> record(static_cast<std::size_t>(width) + 1, '\0');
    std::copy(mine.begin(), mine.end(), record.begin());
    std::vector<char> all(record.size() * static_cast<std::size_t>(world.size()));
    world.all_gather(record.data(), all.data(), record.size(), comm::dtype::u8);
    std::vector<std::string> out;
    for (int r = 0; r < world.size(); ++r)
        out.emplace_back(all.data() + record.size() * static_cast<std::size_t>(r));
    return out;
}

/// One text per host (md.hosts' order): the first rank's of each host.
std::vector<std::string> per_host(const run_metadata& md, const std::vector<std::string>& texts) {
    std::vector<std::string> out(md.hosts.size());
    std::vector<bool> seen(md.hosts.size(), false);
    for (std::size_t r = 0; r < texts.size() && r < md.host_index.size(); ++r) {
        const auto h = static_cast<std::size_t>(md.host_index[r]);
        if (!seen[h])
            out[h] = texts[r];
        seen[h] = true;
    }
    return out;
}

} // namespace

std::string net_interfaces(const std::string& sysfs_net) {
    namespace fs = std::filesystem;
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(sysfs_net, ec))
        if (entry.path().filename() != "lo")
            names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const std::string& name : names) {
        std::ifstream in(fs::path(sysfs_net) / name / "speed");
        long long mbits = -1;
        if (!(in >> mbits))
            mbits = -1; // virtual or down links refuse the read (EINVAL)
        out += (out.empty() ? "" : ", ") + name + " " +
               (mbits > 0 ? std::to_string(mbits) + " Mbit/s" : std::string("unknown"));
    }
    return out;
}

std::string mpi_transport() {
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return "unknown";
    std::string out;
    for (const char* name : {"pml", "mtl", "btl", "btl_tcp_if_include"}) {
        const std::string value = mpit_text(name);
        if (!value.empty())
            out += (out.empty() ? "" : "; ") + std::string(name) + "=" + value;
    }
    MPI_T_finalize();
    return out.empty() ? "unknown" : out;
}

void add_node_metadata(run_metadata& md, comm::communicator& world, bool gpu) {
    md.attrs[schema::meta_attr::mpi_transport] = mpi_transport();
    md.host_strings[schema::meta_net_interfaces] =
        per_host(md, gather_texts(world, net_interfaces()));
    if (gpu)
        md.host_strings[schema::meta_gpu_peers] =
            per_host(md, gather_texts(world, kernels::gpu_peer_topology()));
}

} // namespace ringscale
