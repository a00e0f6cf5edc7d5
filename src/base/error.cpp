#include "error.hpp"

#include <atomic>
#include <fmt/format.h>

namespace ringscale {

namespace {
std::atomic<int> g_rank{-1};
}

const char* to_string(error_kind kind) {
    switch (kind) {
    case error_kind::config:
        return "config";
    case error_kind::mpi:
        return "mpi";
    case error_kind::nccl:
        return "nccl";
    case error_kind::cuda:
        return "cuda";
    case error_kind::hdf5:
        return "hdf5";
    case error_kind::not_compiled:
        return "not compiled";
    case error_kind::io:
        return "io";
    case error_kind::validation:
        return "validation";
    case error_kind::runtime:
        return "runtime";
    }
    return "unknown";
}

void set_error_rank(int rank) {
    g_rank = rank;
}

std::string short_reason(const std::string& what) {
    const auto pos = what.find("): ");
    return pos == std::string::npos ? what : what.substr(pos + 3);
}

void throw_call_error(error_kind kind, const char* call, const std::string& detail,
                      const char* file, int line) {
    const int rank = g_rank;
    std::string where = rank >= 0 ? fmt::format("rank {} at {}:{}", rank, file, line)
                                  : fmt::format("{}:{}", file, line);
    throw error(kind, fmt::format("{} error on {}: {}: {}", to_string(kind), where, call, detail));
}

} // namespace ringscale
