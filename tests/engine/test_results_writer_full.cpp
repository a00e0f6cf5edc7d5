// The results writer on a disk that fills while the file is created: the
// command line and config go to /meta, and a long one may not fit. The writer must fail with
// one clear io error naming the file and leave no unreadable .part behind to fill the disk.
#include "src/base/error.hpp"
#include "src/engine/results_writer.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

using namespace ringscale;

namespace {

/// A 64 KiB tmpfs mounted for the test's life; `error` says why not where it cannot be.
struct small_tmpfs {
    std::string dir;
    std::string error;
    small_tmpfs() {
        char tmpl[] = "/tmp/ringscale_full_XXXXXX";
        dir = mkdtemp(tmpl) ? tmpl : "";
        if (geteuid() != 0)
            error = "mounting a tmpfs needs root";
        else if (dir.empty() || ::mount("ringscale-test", dir.c_str(), "tmpfs", 0, "size=64k"))
            error = std::string("mounting a tmpfs is not permitted here: ") + std::strerror(errno);
    }
    ~small_tmpfs() {
        if (error.empty())
            ::umount(dir.c_str());
        std::filesystem::remove_all(dir);
    }
};

} // namespace

TEST(results_writer, a_disk_full_while_creating_the_file_leaves_no_part) {
    // HDF5 1.10 cannot close a file whose flush failed, and its exit handler then crashes on
    // it (src/base/h5.hpp, file::discard); the launcher ends by MPI_Abort, without exit handlers.
    // Before any other HDF5 call of this process: no exit handler.
    H5dont_atexit();
    small_tmpfs fs;
    if (!fs.error.empty())
        GTEST_SKIP() << fs.error;
    launch_config cfg;
    cfg.output = fs.dir + "/";
    cfg.cmdline = {"ringscale", "--seed", std::string(120 * 1024, '0') + "1"};
    cfg.resolved_text = "seed = " + cfg.cmdline.back() + "\n";
    run_metadata md;
    md.hosts = {"node0"};
    md.host_index = {0};
    md.local_rank = {0};
    const std::string path = fs.dir + "/results.h5";
    try {
        results_writer writer(path, cfg, md);
        FAIL() << "a 240 KB /meta was written to a 64 KiB filesystem";
    } catch (const error& e) {
        EXPECT_EQ(e.kind(), error_kind::io) << e.what();
        EXPECT_NE(std::string(e.what()).find("cannot create the results file '" + path + ".part'"),
                  std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path + ".part"));
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(results_writer, the_metadata_estimate_counts_the_command_line_and_config) {
    launch_config cfg;
    cfg.cmdline = {"ringscale", std::string(120 * 1024, 'x')};
    cfg.resolved_text = std::string(120 * 1024, 'y');
    // The file's /meta holds both texts: the estimate covers them with room for HDF5's heap.
    EXPECT_GE(estimated_metadata_bytes(cfg, 2), 2u * 120 * 1024 + 64 * 1024);
}
