// /meta's view of the nodes: network interfaces and their speed from a sysfs tree made here,
// Open MPI's transport selection through MPI_T, and one entry per host after the gather.
#include "comm/communicator.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/node_metadata.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mpi.h>
#include <unistd.h>

using namespace ringscale;
namespace fs = std::filesystem;

TEST(node_metadata, interfaces_with_known_and_unknown_speeds) {
    const fs::path root =
        fs::temp_directory_path() /
        ("ringscale_sysfs_" + std::to_string(getpid()) + "_" +
         std::to_string(comm::make_world(comm_kind::mpi, comm::memory_space::host)->rank()));
    fs::remove_all(root);
    for (const char* dev : {"lo", "eth0", "veth1", "ib0"})
        fs::create_directories(root / dev);
    std::ofstream(root / "eth0" / "speed") << "10000\n";
    std::ofstream(root / "veth1" / "speed") << "-1\n"; // the kernel's "unknown"
    std::ofstream(root / "lo" / "speed") << "0\n";
    // ib0 has no speed file at all.
    EXPECT_EQ(net_interfaces(root.string()), "eth0 10000 Mbit/s, ib0 unknown, veth1 unknown");
    EXPECT_EQ(net_interfaces((root / "absent").string()), "");
    fs::remove_all(root);
}

TEST(node_metadata, open_mpi_reports_its_transport_selection) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    MPI_Get_library_version(version, &len);
    const std::string transport = mpi_transport();
    if (std::string(version).find("Open MPI") == std::string::npos)
        GTEST_SKIP() << "not Open MPI: " << transport;
    EXPECT_NE(transport.find("pml="), std::string::npos) << transport;
    EXPECT_NE(transport.find("btl="), std::string::npos) << transport;
}

TEST(node_metadata, one_entry_per_host) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    run_metadata md;
    md.hosts = {"here"}; // every rank of these tests runs on this host
    md.host_index.assign(static_cast<std::size_t>(world->size()), 0);
    add_node_metadata(md, *world, false);
    ASSERT_EQ(md.host_strings.at(schema::meta_net_interfaces).size(), 1u);
    EXPECT_EQ(md.host_strings.at(schema::meta_net_interfaces)[0], net_interfaces());
    EXPECT_EQ(md.host_strings.count(schema::meta_gpu_peers), 0u); // no GPU asked for
    EXPECT_FALSE(std::get<std::string>(md.attrs.at(schema::meta_attr::mpi_transport)).empty());
}
