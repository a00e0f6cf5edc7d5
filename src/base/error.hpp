// Project error types and the check macros used by every backend.
#pragma once

#include <stdexcept>
#include <string>

namespace ringscale {

/// What went wrong, so `main` can choose the exit code and message.
enum class error_kind { config, mpi, nccl, cuda, hdf5, not_compiled, io, validation, runtime };

/// Name of an error kind, as printed in the one-line error message.
const char* to_string(error_kind kind);

/// The one project error type; every failure we raise derives from it.
class error : public std::runtime_error {
  public:
    error(error_kind kind, const std::string& what) : std::runtime_error(what), m_kind(kind) {}
    error_kind kind() const { return m_kind; }

  private:
    error_kind m_kind;
};

/// Bad user input: caught before any work, exit code 2 on every rank.
class config_error : public error {
  public:
    explicit config_error(const std::string& what) : error(error_kind::config, what) {}
};

/// A backend (CUDA, NCCL) that was not built into this binary.
class not_compiled_error : public error {
  public:
    explicit not_compiled_error(const std::string& what) : error(error_kind::not_compiled, what) {}
};

/// Record this process's rank so check-macro messages can name it (-1: no MPI).
void set_error_rank(int rank);

/// The detail of a wrapped failure, without the source location and call text
/// ("file.cpp(12): call: reason" -> "reason").
std::string short_reason(const std::string& what);

/// Out-of-line thrower for the check macros: "<kind> error on rank R at file:line: call: detail".
[[noreturn]] void throw_call_error(error_kind kind, const char* call, const std::string& detail,
                                   const char* file, int line);

} // namespace ringscale

/// Throw a config_error when `cond` is false; `msg` is evaluated only on failure.
#define RINGSCALE_REQUIRE(cond, msg)                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            throw ::ringscale::config_error(msg);                                                  \
    } while (0)
