// The reader as a fuzz target: one input is one results file, read the way
// ringscale-stats reads every file (analysis/reader.cpp, load_results): first in a disposable,
// capped child (a file can crash HDF5 itself), then, when that child ended normally, in this
// process under the same memory cap. The only failure a
// file may cause here is a ringscale::error; anything else (a crash, another exception, a
// sanitizer report) ends the process and is the finding.
#include "analysis/reading/file_probe.hpp"
#include "analysis/reading/reader.hpp"
#include "src/base/child_limits.hpp"
#include "src/base/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <unistd.h>

namespace {

/// This process's scratch file for one input.
const std::string& input_path() {
    static const std::string path =
        "/tmp/ringscale_fuzz_reader_" + std::to_string(static_cast<long>(getpid())) + ".h5";
    return path;
}

bool write_input(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(input_path().c_str(), "wb");
    if (!f)
        return false;
    const bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
    return std::fclose(f) == 0 && ok;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ringscale::analysis;
    if (!write_input(data, size))
        return 0;
    const std::string& path = input_path();
    // A file that crashed or exhausted the child is skipped, as ringscale-stats skips it.
    std::vector<std::string> warnings; // the same call in the child and here, as load_results
    if (probe_in_child([&] { read_results_file(path, &warnings); }).empty()) {
        try {
            const ringscale::scoped_memory_cap cap; // as load_results reads it
            read_results_file(path, &warnings);
        } catch (const ringscale::error&) {
            // refused with a reason: what a damaged file should get
        } catch (const std::bad_alloc&) {
            // over the memory cap: skipped with a reason as well
        }
    }
    std::remove(path.c_str());
    return 0;
}
