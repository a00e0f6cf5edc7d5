#include "src/engine/device_binding.hpp"

#include "kernels/attention_path.hpp"
#include "src/base/error.hpp"
#include "src/base/results_schema.hpp"

#include <cstdlib>
#include <fmt/format.h>

namespace ringscale {

namespace {

// This rank's part: select and describe its GPU. Throws on failure.
device_binding bind_mine() {
    device_binding b;
    int local_rank = 0, local_size = 1;
    local_rank_info(local_rank, local_size);
    if (kernels::gpu_count() == 0)
        throw config_error("--device cuda: no CUDA device is visible to this process (check "
                           "CUDA_VISIBLE_DEVICES and the driver, or use --device cpu)");
    kernels::bind_gpu(local_rank, local_size);
    b.gpu = kernels::current_gpu_info();
    b.bound = true;
    return b;
}

// The ranks of `uuids` on the same GPU as `me`, ascending.
std::vector<int> sharers(const std::vector<std::string>& uuids, int me) {
    std::vector<int> same;
    for (std::size_t r = 0; r < uuids.size(); ++r)
        if (uuids[r] == uuids[static_cast<std::size_t>(me)])
            same.push_back(static_cast<int>(r));
    return same;
}

} // namespace

std::string nccl_sharing_problem(const std::vector<std::string>& uuids, int rank, comm_kind comm) {
    const auto same = sharers(uuids, rank);
    if (comm != comm_kind::nccl || same.size() < 2)
        return "";
    return fmt::format("--comm nccl: ranks {} and {} share GPU {}; NCCL needs a GPU of its own "
                       "per rank: start at most one rank per visible GPU on each node, or use "
                       "--comm mpi (staged through host memory), which may share a GPU",
                       same[0], same[1], uuids[static_cast<std::size_t>(rank)]);
}

device_binding bind_devices(comm::communicator& world, const launch_config& cfg,
                            std::string& error_text) {
    device_binding b;
    if (cfg.device != device_kind::cuda)
        return b;
    try {
        b = bind_mine();
        kernels::set_attention_path(kernels::parse_attn_path(cfg.attn_kernel));
        b.attn_kernel = kernels::to_string(kernels::resolve_attention_path(b.gpu.index));
        b.attn_kernel_note = kernels::attention_path_note(kernels::attention_path());
    } catch (const std::exception& e) {
        error_text = e.what();
    }
    const std::int64_t ok_here = error_text.empty() ? 1 : 0;
    std::int64_t ok_all = 0;
    world.allreduce(&ok_here, &ok_all, 1, comm::dtype::i64, comm::reduce_op::min);
    if (ok_all == 0) // every rank stops here; the lowest rank with a message prints it
        return b;
    const auto uuids = gather_strings(world, b.gpu.uuid);
    b.ranks_sharing = static_cast<int>(sharers(uuids, world.rank()).size());
    error_text = nccl_sharing_problem(uuids, world.rank(), cfg.comm);
    if (!error_text.empty())
        return b;
    try {
        // Keep a tenth for NCCL's buffers, cuBLAS workspaces and the allocator's slack.
        b.budget_bytes =
            kernels::gpu_free_bytes() / 10 * 9 / static_cast<std::uint64_t>(b.ranks_sharing);
    } catch (const std::exception& e) {
        error_text = e.what();
    }
    return b;
}

void add_gpu_metadata(run_metadata& md, const device_binding& b, comm::communicator& world) {
    const auto& g = b.gpu;
    std::int32_t index = b.bound ? g.index : -1;
    md.rank_ints[schema::ranks_gpu_index].resize(static_cast<std::size_t>(world.size()));
    world.all_gather(&index, md.rank_ints[schema::ranks_gpu_index].data(), 1, comm::dtype::i32);
    md.rank_strings[schema::ranks_gpu_uuid] = gather_strings(world, g.uuid);
    md.rank_strings[schema::ranks_gpu_pci_bus_id] = gather_strings(world, g.pci_bus_id);
    auto& a = md.attrs;
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    a[schema::meta_attr::cuda_visible_devices] = std::string(visible ? visible : "");
    a[schema::meta_attr::nccl_version] = comm::nccl_version();
    a[schema::attr::attn_kernel] = b.attn_kernel;
    a[schema::attr::attn_kernel_note] = b.attn_kernel_note;
    a[schema::meta_attr::cudnn_version] = kernels::cudnn_runtime_version();
    a[schema::meta_attr::cudnn_frontend_version] = kernels::cudnn_frontend_version();
    if (!b.bound) {
        a[schema::meta_attr::cuda_version] = std::string("");
        return;
    }
    a[schema::meta_attr::device_name] = g.name;
    a[schema::meta_attr::gpu_name] = g.name;
    a[schema::meta_attr::gpu_cc] = fmt::format("{}.{}", g.cc_major, g.cc_minor);
    a[schema::meta_attr::gpu_sm_count] = static_cast<std::int64_t>(g.sm_count);
    a[schema::meta_attr::gpu_memory_bytes] = static_cast<std::int64_t>(g.memory_bytes);
    a[schema::meta_attr::gpu_max_sm_clock_mhz] = static_cast<std::int64_t>(g.max_sm_clock_mhz);
    a[schema::meta_attr::gpu_max_mem_clock_mhz] = static_cast<std::int64_t>(g.max_mem_clock_mhz);
    a[schema::meta_attr::gpu_mem_bus_width_bits] = static_cast<std::int64_t>(g.mem_bus_width_bits);
    a[schema::meta_attr::cuda_driver_version] = kernels::cuda_version_text(g.driver_version);
    a[schema::meta_attr::cuda_runtime_version] = kernels::cuda_version_text(g.runtime_version);
    a[schema::meta_attr::cuda_version] = kernels::cuda_version_text(g.runtime_version);
    a[schema::meta_attr::gpu_ranks_sharing] = static_cast<std::int64_t>(b.ranks_sharing);
    a[schema::meta_attr::timer] =
        std::string("std::chrono::steady_clock (step); CUDA events on the compute stream "
                    "(compute, comm_wait)");
    a[schema::meta_attr::sync] =
        std::string("compute stream synchronized and MPI_Barrier before each iteration; "
                    "slowest rank is the step time");
}

} // namespace ringscale
