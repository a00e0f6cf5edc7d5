// A plain driver for the reader's fuzz target (fuzz_reader_target.cpp), built with the
// project's compiler and run in CI: every file given (the corpus in tests/data/hostile, the
// crafted shapes of tests/hostile/craft.py, a real launch's file), then COUNT seeded
// mutations of them (byte flips, interesting 8-byte values, splices). A crash or an
// exception other than ringscale::error ends this process: the test fails.
//
// usage: fuzz_replay COUNT FILE_OR_DIR...   (COUNT mutations, seeds 0..COUNT-1)
//   A crash names its input on stderr; with FUZZ_KEEP_DIR=DIR the input is also left in
//   DIR/current.h5.
#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using bytes = std::vector<std::uint8_t>;

char g_current[512] = "no input yet"; // what is being read, for the crash report
pid_t g_driver = 0;                   // the probe's children crash by design: not reported

/// A crash names the input that caused it (keep it: fuzz_replay can replay one file), then
/// ends the process by the same signal.
extern "C" void on_crash(int sig) {
    std::signal(sig, SIG_DFL);
    if (getpid() != g_driver) { // delivered once this handler returns
        std::raise(sig);
        return;
    }
    const char prefix[] = "fuzz_replay: crashed on ";
    ssize_t ignored = ::write(2, prefix, sizeof prefix - 1);
    ignored = ::write(2, g_current, std::strlen(g_current));
    ignored = ::write(2, "\n", 1);
    (void)ignored;
    std::raise(sig);
}

void run_one(const bytes& b, const std::string& what, const std::string& keep_dir) {
    std::snprintf(g_current, sizeof g_current, "%s", what.c_str());
    if (!keep_dir.empty()) { // the input on disk before it is read: a crash leaves it there
        std::ofstream(keep_dir + "/current.h5", std::ios::binary)
            .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    }
    LLVMFuzzerTestOneInput(b.data(), b.size());
}

bytes read_all(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return bytes(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::filesystem::path> inputs(int argc, char** argv) {
    std::vector<std::filesystem::path> out;
    for (int i = 2; i < argc; ++i) {
        if (!std::filesystem::is_directory(argv[i])) {
            out.emplace_back(argv[i]);
            continue;
        }
        for (const auto& e : std::filesystem::directory_iterator(argv[i]))
            if (e.path().extension() == ".h5")
                out.push_back(e.path());
    }
    std::sort(out.begin(), out.end()); // the same run whatever the directory order
    return out;
}

/// One mutant of `b` (not empty), as AFL's havoc stage would make it.
bytes mutate(bytes b, std::mt19937_64& rng) {
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    switch (rng() % 4) {
    case 0: // a few random bytes
        for (std::size_t k = 1 + pick(8); k > 0; --k)
            b[pick(b.size())] = static_cast<std::uint8_t>(rng());
        break;
    case 1: // single bit flips
        for (std::size_t k = 1 + pick(4); k > 0; --k)
            b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
        break;
    case 2: { // an interesting little-endian value over 8 bytes (sizes, addresses)
        const std::uint64_t values[] = {0, 1, 0xff, 0x7fffffff, 0xffffffff, 1ull << 62, ~0ull};
        const std::uint64_t v = values[pick(7)];
        const std::size_t at = b.size() > 8 ? pick(b.size() - 8) : 0;
        for (std::size_t i = 0; i < 8 && at + i < b.size(); ++i)
            b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
        break;
    }
    default: { // a splice: a block copied from elsewhere in the file
        const std::size_t n = std::min<std::size_t>(b.size() / 2, 8 + pick(249));
        const std::size_t src = pick(b.size() - n + 1), dst = pick(b.size() - n + 1);
        std::copy(b.begin() + src, b.begin() + src + n, b.begin() + dst);
    }
    }
    return b;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: fuzz_replay COUNT FILE_OR_DIR...\n");
        return 2;
    }
    const long count = std::strtol(argv[1], nullptr, 10);
    // FUZZ_KEEP_DIR: where the input being read is written first (current.h5), to keep one
    // that crashes.
    const char* keep = std::getenv("FUZZ_KEEP_DIR");
    const std::string keep_dir = keep ? keep : "";
    g_driver = getpid();
    std::signal(SIGSEGV, on_crash);
    std::signal(SIGBUS, on_crash);
    std::signal(SIGABRT, on_crash);
    std::vector<bytes> corpus;
    for (const auto& p : inputs(argc, argv)) {
        corpus.push_back(read_all(p));
        run_one(corpus.back(), p.string(), keep_dir);
    }
    corpus.erase(
        std::remove_if(corpus.begin(), corpus.end(), [](const bytes& b) { return b.size() < 16; }),
        corpus.end());
    if (corpus.empty()) {
        std::fprintf(stderr, "fuzz_replay: no input file of 16 bytes or more\n");
        return 2;
    }
    for (long i = 0; i < count; ++i) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(i));
        const bytes m = mutate(corpus[rng() % corpus.size()], rng);
        run_one(m, "mutant " + std::to_string(i), keep_dir);
    }
    std::printf("fuzz_replay: %zu files, %ld mutants, every read ended normally\n", corpus.size(),
                count);
    return 0;
}
