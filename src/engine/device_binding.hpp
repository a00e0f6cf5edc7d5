// --device cuda: each rank binds the GPU of its node-local rank, the ranks learn who shares
// a GPU (NCCL cannot: refused before any work), the plan gets each rank's share of its GPU's
// free memory, and /meta and /ranks get the GPUs' description.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/gpu.hpp"
#include "src/engine/config.hpp"
#include "src/engine/metadata.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale {

struct device_binding {
    bool bound = false;             ///< false with --device cpu
    kernels::gpu_info gpu;          ///< this rank's GPU
    int ranks_sharing = 1;          ///< ranks on this GPU, this one included
    std::uint64_t budget_bytes = 0; ///< device memory this rank may plan for
    std::string attn_kernel;        ///< resolved --attn-kernel on this GPU: sm80 | sm90 | cudnn
    std::string attn_kernel_note;   ///< why (kernels::attention_path_note)
};

/// Collective over `world` (host-memory MPI). With --device cuda: select the GPU
/// local_rank % (visible GPUs), then compare every rank's GPU UUID. Returns the error text
/// (one line; "" when fine) instead of throwing: no GPU visible, CUDA not compiled, or
/// --comm nccl with ranks sharing a GPU (the fix is named), or --attn-kernel sm90 where the
/// build or the GPU cannot run it. Sets the process-wide attention path. Every rank returns; with
/// an error on any rank the binding is unusable. Does nothing with --device cpu.
device_binding bind_devices(comm::communicator& world, const launch_config& cfg,
                            std::string& error_text);

/// The one-line refusal of --comm nccl when rank `rank` shares its GPU (same entry of
/// `uuids`, one per rank) with another rank, naming the fix; "" when it may go on (any other
/// communicator, or a GPU of its own).
std::string nccl_sharing_problem(const std::vector<std::string>& uuids, int rank, comm_kind comm);

/// Collective: /meta attributes (GPU name, compute capability, SMs, memory, clocks, driver,
/// runtime and NCCL versions, CUDA_VISIBLE_DEVICES, attn_kernel: the resolved attention
/// kernel path; rank 0's GPU) and /ranks datasets
/// gpu_index, gpu_uuid, gpu_pci_bus_id. Empty strings and -1 with --device cpu.
void add_gpu_metadata(run_metadata& md, const device_binding& b, comm::communicator& world);

} // namespace ringscale
