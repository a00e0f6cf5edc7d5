// What the machine did while something ran on every rank (a case, a sentinel probe): a window
// opened before and closed after it, combined over the ranks that share a kernel (a machine:
// network namespaces emulating nodes share one), into the fields of schema::machine_ds.
// src/base/machine_state.hpp reads /proc and sysfs; src/base/machine_marks.hpp judges.
#pragma once

#include "comm/communicator.hpp"
#include "kernels/gpu.hpp"
#include "src/base/machine_marks.hpp"
#include "src/base/machine_state.hpp"

#include <string>
#include <vector>

namespace ringscale {

/// The launch's ranks as the machine state sees them, from one collective at launch start.
struct machine_context {
    std::vector<int> cores;      ///< the union of the allowed cores of this machine's ranks
    std::vector<int> machine_of; ///< per rank: its machine (ranks sharing a kernel's boot id)
    std::vector<int> threads;    ///< per rank: its threads
    std::string gpu_bus_id;      ///< --device cuda: this rank's GPU, "" on the CPU
    int gpu_ranks_sharing = 1;   ///< the launch's ranks on that GPU
};

/// Collective over `world` (host memory): gather every rank's boot id, allowed cores and
/// `threads`. `gpu_bus_id` "" on the CPU.
machine_context make_machine_context(comm::communicator& world, int threads,
                                     const std::string& gpu_bus_id, int gpu_ranks_sharing);

/// The state at a window's opening. Not collective.
struct machine_window {
    machine::proc_stat stat;
    machine::process_sample process;
    kernels::gpu_sample gpu;
};

/// Open a window now. Not collective (call it on every rank after a barrier).
machine_window open_window(const machine_context& ctx);

/// Collective: close `w` now and return the fields over it, one value per rank on every rank
/// (NaN where not known; GPU fields only with a GPU). Call after a barrier.
machine::machine_fields close_window(comm::communicator& world, const machine_context& ctx,
                                     const machine_window& w);

/// Why GPU fields are missing on this rank ("" when NVML answers, or on the CPU): for one note.
std::string gpu_state_note(const machine_context& ctx);

} // namespace ringscale
