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
    for (device_kind k : {device_kind::cpu, device_kind::cuda})
        if (name == to_string(k))
            return k;
    return std::nullopt;
}

std::optional<comm_kind> find_comm_kind(const std::string& name) {
    for (comm_kind k : {comm_kind::mpi, comm_kind::nccl})
        if (name == to_string(k))
            return k;
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
