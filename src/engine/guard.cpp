#include "src/engine/guard.hpp"

#include "comm/blocking.hpp"
#include "src/base/clock.hpp"
#include "src/base/text_escape.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mpi.h>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace ringscale {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "signal flag must be lock-free");

std::atomic<long> g_sender{0}; // the pid that sent the stop signal
static_assert(std::atomic<long>::is_always_lock_free, "sender pid must be lock-free");

extern "C" void on_stop_signal(int sig, siginfo_t* info, void*) {
    g_sender.store(info ? static_cast<long>(info->si_pid) : 0);
    g_signal.store(sig);
}

void install_stop(int sig) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_stop_signal;
    // SA_RESETHAND: a second signal takes the default action, should stopping itself hang.
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
}

/// The signal's name, and who sent it when that matters: Open MPI's launcher (this rank's
/// parent, mpirun or orted) sends SIGTERM for a SIGINT or SIGTERM it received itself.
std::string stop_signal_text(int sig) {
    std::string text = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
    text += " received";
    if (g_sender.load() != 0 && g_sender.load() == static_cast<long>(getppid()))
        text += " (sent by the MPI launcher, which forwards SIGINT and SIGTERM as SIGTERM)";
    return text;
}

// Exit code for the last-resort alarm below (written once, before the alarm is armed).
volatile std::sig_atomic_t g_abort_code = 1;

extern "C" void on_abort_alarm(int) {
    std::_Exit(g_abort_code);
}

void install(int sig, void (*handler)(int), int flags) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
}

// The MPI launchers whose end leaves this rank orphaned: Open MPI's (mpirun, orted, prte),
// MPICH's Hydra and Slurm's step daemon. Once the launcher is gone nobody reads this rank's
// output or will signal it again (Open MPI's mpirun, sent SIGTERM twice, exits at once
// without passing it on), so the launch is stopped as if signalled.
bool is_mpi_launcher(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    for (const char* known : {"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "prte",
                              "hydra_pmi_proxy", "mpiexec.hydra", "slurmstepd"})
        if (name == known)
            return true;
    return false;
}

// Ranks other than 0 wait this long after a signal for rank 0 to close the file and end the
// job; if rank 0 was not signalled (or is gone), they end it themselves.
constexpr double peer_grace_s = 3.0;
constexpr auto poll_interval = std::chrono::milliseconds(50);
// Longest wait for MPI_Abort to end the job before this rank exits on its own.
constexpr unsigned abort_deadline_s = 10;
// Longest wait for the main thread to finish creating the results file before an abort.
constexpr int hook_wait_ms = 5000;

} // namespace

struct launch_guard::state {
    int rank = 0;
    double timeout_s = 600;
    std::atomic<int> case_index{-1};
    std::atomic<bool> stop{false};
    pid_t launcher = 0; // the parent MPI launcher at the start, 0 when the parent is not one
    std::timed_mutex hook_mutex;
    std::function<void()> before_abort;
    std::thread thread;

    [[noreturn]] void abort_job(int code) {
        std::fflush(stdout);
        std::fflush(stderr);
        {
            // The main thread holds the lock while it creates the results file: wait for it
            // (a file cut between its creation and its first flush cannot be read), but not
            // forever (a hung disk).
            std::unique_lock<std::timed_mutex> lock(hook_mutex, std::defer_lock);
            if (lock.try_lock_for(std::chrono::milliseconds(hook_wait_ms)) && before_abort) {
                try {
                    before_abort();
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "ringscale: rank %d: %s\n", rank,
                                 terminal_text(e.what()).c_str());
                }
            }
            std::fflush(stderr);
            // MPI_Abort from this thread can hang while the main thread is inside MPI (seen
            // with Open MPI 4.1 under SIGTERM); the alarm ends this rank regardless, and the
            // launcher (mpiexec, srun) then ends the rest.
            g_abort_code = code;
            install(SIGALRM, on_abort_alarm, 0);
            alarm(abort_deadline_s);
            MPI_Abort(MPI_COMM_WORLD, code);
        }
        std::_Exit(code); // MPI_Abort does not return; never fall back into the launch
    }

    // Why the launch must stop now: a stop signal, or its MPI launcher gone; "" otherwise.
    std::string stop_reason() const {
        if (const int sig = g_signal.load())
            return stop_signal_text(sig);
        if (launcher != 0 && getppid() != launcher)
            return "the MPI launcher (process " + std::to_string(launcher) + ") is gone";
        return "";
    }

    void watch() {
        double stopping_at = 0;
        while (!stop.load()) {
            std::this_thread::sleep_for(poll_interval);
            const double now = now_s();
            if (stopping_at == 0) {
                if (const std::string why = stop_reason(); !why.empty()) {
                    stopping_at = now;
                    if (rank == 0)
                        std::fprintf(stderr,
                                     "ringscale: rank 0: %s; stopping (completed cases "
                                     "stay in the results file, marked incomplete)\n",
                                     why.c_str());
                }
            }
            if (stopping_at != 0 && (rank == 0 || now - stopping_at > peer_grace_s))
                abort_job(exit_interrupted);
            const comm::blocking_state& b = comm::current_blocking();
            const char* op = b.op.load(std::memory_order_acquire);
            if (op && now - b.since_s.load() > timeout_s) {
                const int c = case_index.load();
                char where[32] = "no case running";
                if (c >= 0)
                    std::snprintf(where, sizeof(where), "case %d", c);
                std::fprintf(stderr, "ringscale: rank %d: timeout after %g s in %s (%s)\n", rank,
                             timeout_s, op, where);
                abort_job(exit_timeout);
            }
        }
    }
};

launch_guard::launch_guard(int rank, double timeout_s) : m(std::make_unique<state>()) {
    m->rank = rank;
    m->timeout_s = timeout_s;
    install_stop(SIGTERM);
    install_stop(SIGINT);
    install(SIGXFSZ, SIG_IGN, 0);
    // Output to a launcher that is gone fails (EPIPE) instead of killing the rank while it
    // writes its results file.
    install(SIGPIPE, SIG_IGN, 0);
    const pid_t parent = getppid();
    m->launcher = is_mpi_launcher(parent) ? parent : 0;
    m->thread = std::thread([s = m.get()] { s->watch(); });
}

launch_guard::~launch_guard() {
    m->stop.store(true);
    m->thread.join();
    install(SIGTERM, SIG_DFL, 0);
    install(SIGINT, SIG_DFL, 0);
    install(SIGPIPE, SIG_DFL, 0);
}

void launch_guard::set_case(int index) {
    m->case_index.store(index);
}

void launch_guard::set_before_abort(std::function<void()> fn) {
    std::lock_guard<std::timed_mutex> lock(m->hook_mutex);
    m->before_abort = std::move(fn);
}

void launch_guard::set_before_abort_after(const std::function<std::function<void()>()>& create) {
    std::lock_guard<std::timed_mutex> lock(m->hook_mutex);
    m->before_abort = create();
}

} // namespace ringscale
