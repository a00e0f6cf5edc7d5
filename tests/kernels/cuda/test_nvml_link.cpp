// The GPU link names (kernels/cuda/nvml_link): nvidia-smi's PCIe path names for NVML's topology
// levels, and no name at all where NVML cannot say (bus ids NVML does not know, or no driver).
#include "kernels/cuda/nvml_link.hpp"

#include <gtest/gtest.h>

namespace ringscale::kernels::cuda {
namespace {

TEST(NvmlLink, PciePathsAsNvidiaSmiNamesThem) {
    EXPECT_EQ(pcie_path_name(10), "PIX");
    EXPECT_EQ(pcie_path_name(20), "PXB");
    EXPECT_EQ(pcie_path_name(30), "PHB");
    EXPECT_EQ(pcie_path_name(40), "NODE");
    EXPECT_EQ(pcie_path_name(50), "SYS");
}

TEST(NvmlLink, LevelsNvmlDoesNotDefineHaveNoName) {
    for (int level : {-1, 0, 5, 15, 60, 1000})
        EXPECT_EQ(pcie_path_name(level), "") << level;
}

TEST(NvmlLink, BusIdsNoDriverKnowsGiveNoLink) {
    // With or without a driver: no GPU sits at these bus ids, so NVML (if loaded) has no
    // handle for them, and the link stays unnamed rather than guessed.
    EXPECT_EQ(nvml_link("0000:ff:1f.7", "0000:fe:1f.7"), "");
    EXPECT_EQ(nvml_link("", "not a bus id"), "");
}

} // namespace
} // namespace ringscale::kernels::cuda
