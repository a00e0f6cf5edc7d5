#include "file_summaries.hpp"

#include "analysis/reading/reader.hpp"
#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <hdf5.h>
#include <new>
#include <poll.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ringscale::analysis::history {

namespace {

/// A summary's bytes end with this, so a reply cut short never decodes.
constexpr std::uint64_t end_mark = 0x52534853554d4d59; // "RSHSUMMY"
/// A child sending more than this is cut off (its files read again one a child).
constexpr std::size_t max_reply_bytes = std::size_t{256} << 20;
/// The most files one child reads.
constexpr std::size_t max_batch_files = 16;

template <class T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put(std::string& out, const std::string& s) {
    put<std::uint64_t>(out, s.size());
    out += s;
}

/// Reads what put() wrote; every read checked against the end of the bytes.
class wire_reader {
  public:
    explicit wire_reader(const std::string& bytes) : m_bytes(bytes) {}
    template <class T>
    T get() {
        T v{};
        need(sizeof v);
        std::memcpy(&v, m_bytes.data() + m_pos, sizeof v);
        m_pos += sizeof v;
        return v;
    }
    std::string text() {
        const auto n = get<std::uint64_t>();
        need(n);
        std::string s = m_bytes.substr(m_pos, n);
        m_pos += n;
        return s;
    }
    bool at_end() const { return m_pos == m_bytes.size(); }

  private:
    void need(std::uint64_t n) {
        if (n > m_bytes.size() - m_pos)
            throw std::out_of_range("short summary");
    }
    const std::string& m_bytes;
    std::size_t m_pos = 0;
};

void put_launch(std::string& out, const launch_record& l) {
    put(out, l.launch);
    put(out, l.path);
    put(out, l.created_utc);
    put<std::int64_t>(out, l.time_s);
    put(out, l.git_commit);
    put<std::uint8_t>(out, l.complete);
    put<std::uint64_t>(out, l.meta.size());
    for (const auto& [k, v] : l.meta) {
        put(out, k);
        put(out, v);
    }
}

launch_record get_launch(wire_reader& in) {
    launch_record l;
    l.launch = in.text();
    l.path = in.text();
    l.created_utc = in.text();
    l.time_s = in.get<std::int64_t>();
    l.git_commit = in.text();
    l.complete = in.get<std::uint8_t>() != 0;
    for (auto n = in.get<std::uint64_t>(); n > 0; --n) {
        std::string k = in.text();
        l.meta[std::move(k)] = in.text();
    }
    return l;
}

void put_case(std::string& out, const launch_case& c) {
    for (const std::string* t : {&c.launch, &c.key, &c.label})
        put(out, *t);
    put<std::int64_t>(out, c.iterations);
    for (const double v :
         {c.step_s, c.compute_s, c.comm_s, c.wait_s, c.memory_bytes, c.compute_cpu_s})
        put<double>(out, v);
    put(out, c.machine);
}

launch_case get_case(wire_reader& in) {
    launch_case c;
    for (std::string* t : {&c.launch, &c.key, &c.label})
        *t = in.text();
    c.iterations = in.get<std::int64_t>();
    for (double* v :
         {&c.step_s, &c.compute_s, &c.comm_s, &c.wait_s, &c.memory_bytes, &c.compute_cpu_s})
        *v = in.get<double>();
    c.machine = in.text();
    return c;
}

bool write_all(int fd, const std::string& bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

/// `path` read and summarised (in the child; its one-line problem when it cannot be).
file_summary summarise_file(const std::string& path, const child_limits& limits) {
    file_summary s;
    try {
        const std::vector<case_data> cases = read_results_file(path);
        if (!cases.empty() && cases.front().file) {
            s.launch = describe_launch(*cases.front().file);
            s.cases = summarize_launch(cases);
        }
    } catch (const error& e) {
        s = {terminal_text(e.what()).substr(0, 300), std::nullopt, {}};
    } catch (const std::bad_alloc&) {
        s = {child_memory_reason(limits), std::nullopt, {}};
    } catch (const std::exception& e) {
        s = {"reading it failed: " + terminal_text(e.what()).substr(0, 280), std::nullopt, {}};
    }
    return s;
}

/// The child: cap memory, then for each of `paths` in turn arm the time cap, read and
/// summarise it, close HDF5 (so heap damage the file did quietly kills the child there:
/// file_probe.cpp) and send the summary as a frame (its length, then its bytes); never
/// returns. A child that dies leaves the frames of the files it finished.
[[noreturn]] void run_child(const std::vector<std::string>& paths, const child_limits& limits,
                            double base_s, int fd) {
    apply_child_limits(limits);
    for (const std::string& path : paths) {
        // CPU time (ITIMER_PROF, SIGPROF), and a wall clock for a read that blocks.
        const double cpu = read_cpu_limit_s(path, base_s);
        itimerval t{};
        t.it_value.tv_sec = static_cast<time_t>(cpu);
        t.it_value.tv_usec = static_cast<suseconds_t>((cpu - std::floor(cpu)) * 1e6);
        if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0)
            t.it_value.tv_usec = 1; // zero would disarm the timer
        setitimer(ITIMER_PROF, &t, nullptr);
        alarm(static_cast<unsigned>(std::ceil(read_wall_limit_s(cpu))));
        const file_summary s = summarise_file(path, limits);
        if (H5close() < 0)
            _exit(4);
        std::string frame;
        try {
            const std::string bytes = encode_summary(s);
            put<std::uint64_t>(frame, bytes.size());
            frame += bytes;
        } catch (...) {
            _exit(5);
        }
        if (!write_all(fd, frame))
            _exit(3);
    }
    _exit(0);
}

struct reader_child {
    pid_t pid = -1;
    int fd = -1;
    std::vector<std::size_t> indices; ///< into the paths, in the order it reads them
    std::string reply;
    bool too_large = false;
};

/// Fork a child reading the paths at `indices`; false (errno set) when no pipe or process
/// could be made.
bool start_child(const std::vector<std::string>& all, std::vector<std::size_t> indices,
                 const child_limits& limits, double base_s, std::vector<reader_child>& running) {
    std::vector<std::string> paths;
    for (std::size_t i : indices)
        paths.push_back(all[i]);
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    std::fflush(nullptr); // the child must not flush the parent's buffered output twice
    const pid_t pid = fork();
    if (pid < 0) {
        const int saved = errno;
        close(fds[0]);
        close(fds[1]);
        errno = saved;
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(paths, limits, base_s, fds[1]);
    }
    close(fds[1]);
    running.push_back({pid, fds[0], std::move(indices), {}});
    return true;
}

/// The whole frames at the start of `reply`, decoded, up to the first that is not whole.
std::vector<file_summary> whole_frames(const std::string& reply) {
    std::vector<file_summary> out;
    for (std::size_t at = 0; reply.size() - at >= sizeof(std::uint64_t);) {
        std::uint64_t n = 0;
        std::memcpy(&n, reply.data() + at, sizeof n);
        at += sizeof n;
        if (n > reply.size() - at)
            break;
        std::optional<file_summary> s = decode_summary(reply.substr(at, n));
        if (!s)
            break;
        out.push_back(std::move(*s));
        at += n;
    }
    return out;
}

/// Why a child that read one file gave no summary of it.
file_summary child_failure(const reader_child& c, int status, const std::string& path,
                           const child_limits& limits, double base_s) {
    const auto failed = [](std::string why) { return file_summary{std::move(why), {}, {}}; };
    if (c.too_large)
        return failed("reading it failed (its reader sent more than a summary holds)");
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGPROF || WTERMSIG(status) == SIGALRM)) {
        const double cpu = read_cpu_limit_s(path, base_s);
        const bool on_cpu = WTERMSIG(status) == SIGPROF;
        file_summary s =
            failed(fmt::format("reading it took more than {} s{}: read again next run",
                               limit_seconds_text(on_cpu ? cpu : read_wall_limit_s(cpu)),
                               on_cpu ? " of CPU time" : ""));
        s.retry = true;
        return s;
    }
    if (WIFSIGNALED(status))
        return failed(child_signal_reason(WTERMSIG(status), limits));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return failed(fmt::format("reading it failed (exit {})", WEXITSTATUS(status)));
    return failed("reading it failed (its reader sent no whole summary)");
}

/// Reap a child whose pipe reached its end and keep its whole summaries in `out` (each was
/// sent after its file's HDF5 closed cleanly). A child of one file that did not end normally
/// with its summary gives that file its reason; a child of several that did not answer for
/// them all gives the rest back to `alone`, to be read one file a child.
void finish_child(reader_child& c, const std::vector<std::string>& paths,
                  const child_limits& limits, double base_s, std::vector<file_summary>& out,
                  std::vector<std::size_t>& alone) {
    close(c.fd);
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::vector<file_summary> got =
        c.too_large ? std::vector<file_summary>{} : whole_frames(c.reply);
    const bool clean = !c.too_large && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (c.indices.size() == 1 && !(clean && got.size() == 1)) {
        out[c.indices[0]] = child_failure(c, status, paths[c.indices[0]], limits, base_s);
        return;
    }
    const std::size_t kept = std::min(got.size(), c.indices.size());
    for (std::size_t k = 0; k < kept; ++k)
        out[c.indices[k]] = std::move(got[k]);
    alone.insert(alone.end(), c.indices.begin() + static_cast<std::ptrdiff_t>(kept),
                 c.indices.end());
}

/// Read what is ready on a child's pipe; true at its end.
bool drain(reader_child& c) {
    char buf[1 << 16];
    const ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n < 0)
        return errno != EINTR && errno != EAGAIN;
    if (n == 0)
        return true;
    if (c.reply.size() + static_cast<std::size_t>(n) > max_reply_bytes) {
        kill(c.pid, SIGKILL); // a summary this large is no summary
        c.too_large = true;
        return true;
    }
    c.reply.append(buf, static_cast<std::size_t>(n));
    return false;
}

} // namespace

std::string encode_summary(const file_summary& s) {
    std::string out;
    put(out, s.problem);
    put<std::uint8_t>(out, s.launch.has_value());
    if (s.launch)
        put_launch(out, *s.launch);
    put<std::uint64_t>(out, s.cases.size());
    for (const launch_case& c : s.cases)
        put_case(out, c);
    put<std::uint64_t>(out, end_mark);
    return out;
}

std::optional<file_summary> decode_summary(const std::string& bytes) {
    wire_reader in(bytes);
    try {
        file_summary s;
        s.problem = in.text();
        if (in.get<std::uint8_t>() != 0)
            s.launch = get_launch(in);
        for (auto n = in.get<std::uint64_t>(); n > 0; --n)
            s.cases.push_back(get_case(in));
        if (in.get<std::uint64_t>() != end_mark || !in.at_end())
            return std::nullopt;
        return s;
    } catch (const std::out_of_range&) {
        return std::nullopt;
    } catch (const std::length_error&) {
        return std::nullopt;
    }
}

unsigned default_readers() {
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

std::vector<file_summary> read_summaries(const std::vector<std::string>& paths, unsigned workers,
                                         const child_limits& limits, double base_s) {
    std::vector<file_summary> out(paths.size());
    std::vector<reader_child> running;
    std::vector<std::size_t> alone; // files a child of several did not answer for
    std::size_t next = 0;
    workers = std::max(workers, 1u);
    // Initialise the HDF5 library here once (it reads no file): each child inherits it
    // instead of setting it up again, a tenth of a small file's read.
    if (H5open() < 0)
        throw error(error_kind::hdf5, "cannot initialise the HDF5 library");
    while (next < paths.size() || !alone.empty() || !running.empty()) {
        while (running.size() < workers && (next < paths.size() || !alone.empty())) {
            // A child reads a batch (its heap, warm after the first file, serves the rest:
            // a fork and a fresh heap per file were half the CPU time), small enough that the
            // last batches keep every worker busy.
            std::vector<std::size_t> batch;
            if (!alone.empty()) {
                batch = {alone.back()};
                alone.pop_back();
            } else {
                const std::size_t n = std::clamp<std::size_t>((paths.size() - next) / (4 * workers),
                                                              1, max_batch_files);
                for (std::size_t k = 0; k < n; ++k)
                    batch.push_back(next++);
            }
            if (!start_child(paths, batch, limits, base_s, running)) {
                if (running.empty()) // none at all: nothing can be read safely
                    throw error(error_kind::io, fmt::format("cannot start a reader process: {}",
                                                            std::strerror(errno)));
                alone.insert(alone.end(), batch.begin(), batch.end());
                break; // try again when one has ended
            }
        }
        std::vector<pollfd> fds;
        for (const reader_child& c : running)
            fds.push_back({c.fd, POLLIN, 0});
        if (poll(fds.data(), static_cast<nfds_t>(fds.size()), -1) < 0) {
            if (errno == EINTR)
                continue;
            throw error(error_kind::io,
                        fmt::format("waiting for the reader processes: {}", std::strerror(errno)));
        }
        for (std::size_t i = fds.size(); i-- > 0;) {
            if (fds[i].revents == 0 || !drain(running[i]))
                continue;
            finish_child(running[i], paths, limits, base_s, out, alone);
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    return out;
}

} // namespace ringscale::analysis::history
