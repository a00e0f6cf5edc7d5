#include "src/base/backend.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale {

const char* to_string(device_kind kind) {
    return kind == device_kind::cuda ? "cuda" : "cpu";
}

const char* to_string(comm_kind kind) {
    return kind == comm_kind::nccl ? "nccl" : "mpi";
}

std::optional<device_kind> find_device_kind(const std::string& name) {
    if (name == "cpu")
        return device_kind::cpu;
    if (name == "cuda")
        return device_kind::cuda;
    return std::nullopt;
}

std::optional<comm_kind> find_comm_kind(const std::string& name) {
    if (name == "mpi")
        return comm_kind::mpi;
    if (name == "nccl")
        return comm_kind::nccl;
    return std::nullopt;
}

device_kind parse_device_kind(const std::string& name) {
    if (const auto kind = find_device_kind(name))
        return *kind;
    throw config_error(fmt::format("--device: '{}' is not cpu or cuda", name));
}

comm_kind parse_comm_kind(const std::string& name) {
    if (const auto kind = find_comm_kind(name))
        return *kind;
    throw config_error(fmt::format("--comm: '{}' is not mpi or nccl", name));
}

} // namespace ringscale
