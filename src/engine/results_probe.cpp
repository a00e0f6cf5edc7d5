#include "src/engine/results_probe.hpp"

#include "src/engine/resume.hpp"

#include <cerrno>
#include <exception>
#include <fcntl.h>
#include <fmt/format.h>
#include <new>
#include <spawn.h>
#include <sys/wait.h>
#include <vector>

extern char** environ;

namespace ringscale {

namespace {

constexpr int exit_memory = 3; // the child ran out of memory (std::bad_alloc)

} // namespace

int probe_results_main(const char* path, const child_limits& limits) {
    apply_child_limits(limits);
    try {
        read_completed_cases(path);
    } catch (const std::bad_alloc&) {
        return exit_memory;
    } catch (const std::exception&) {
        // An ordinary error: the in-process read reports it the usual way.
    }
    return 0;
}

std::string probe_results_file(const std::string& path, const std::string& exe,
                               const child_limits& limits) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The in-process read that follows says whatever is to be said; the child stays quiet.
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> args = {exe, probe_results_flag, path};
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int err = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0)
        return ""; // cannot probe (no /proc?): read in-process as before
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return child_signal_reason(WTERMSIG(status), limits);
    if (WIFEXITED(status) && WEXITSTATUS(status) == exit_memory)
        return child_memory_reason(limits);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return fmt::format("reading it failed (exit {})", WEXITSTATUS(status));
    return "";
}

} // namespace ringscale
