// Which compute device (--device) and communication backend (--comm) a launch runs on. The
// user's names are parsed into these enums once, here; everything else compares enums. This
// is the one place that compares backend names, results files' device names included.
#pragma once

#include <optional>
#include <string>

namespace ringscale {

/// Where kernels run and buffers live: the CPU (host memory) or a CUDA GPU.
enum class device_kind { cpu, cuda };

/// How ranks communicate: MPI (host memory, or device memory staged through it) or NCCL.
enum class comm_kind { mpi, nccl };

/// "cpu" | "cuda": the name --device takes and results files record.
const char* to_string(device_kind kind);
/// "mpi" | "nccl": the name --comm takes and results files record.
const char* to_string(comm_kind kind);

/// The device a name denotes, or nothing for any other name (never throws: results files
/// carry such names as data).
std::optional<device_kind> find_device_kind(const std::string& name);
/// The communication backend a name denotes, or nothing for any other name.
std::optional<comm_kind> find_comm_kind(const std::string& name);

/// --device NAME: config_error ("--device: 'x' is not cpu or cuda") for another name.
device_kind parse_device_kind(const std::string& name);
/// --comm NAME: config_error ("--comm: 'x' is not mpi or nccl") for another name.
comm_kind parse_comm_kind(const std::string& name);

} // namespace ringscale
