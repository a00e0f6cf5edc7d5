// The BLAS core check (kernels/blas_core.hpp): a pre-AVX OpenBLAS core on an AVX2 or AVX-512
// CPU is named with the OPENBLAS_CORETYPE that fixes it; a core that suits the CPU is not.
#include "kernels/blas_core.hpp"

#include <gtest/gtest.h>

using namespace ringscale::kernels;

TEST(blas_core, a_generic_core_on_a_vector_cpu_is_named_with_its_fix) {
    const std::string w = blas_core_warning("Prescott", {true, true});
    EXPECT_NE(w.find("'Prescott'"), std::string::npos) << w;
    EXPECT_NE(w.find("AVX-512"), std::string::npos) << w;
    EXPECT_NE(w.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << w;
    const std::string h = blas_core_warning("core2", {true, false}); // any case
    EXPECT_NE(h.find("OPENBLAS_CORETYPE=Haswell"), std::string::npos) << h;
}

TEST(blas_core, a_core_that_suits_the_cpu_says_nothing) {
    EXPECT_EQ(blas_core_warning("SkylakeX", {true, true}), "");
    EXPECT_EQ(blas_core_warning("Haswell", {true, false}), "");
    EXPECT_EQ(blas_core_warning("Zen", {true, false}), "");
    EXPECT_EQ(blas_core_warning("Prescott", {false, false}), ""); // an old CPU: nothing better
    EXPECT_EQ(blas_core_warning("", {true, true}), "");
}

TEST(blas_core, this_process_names_its_core) {
    // The linked OpenBLAS names a core on every machine (DYNAMIC_ARCH or not).
    EXPECT_FALSE(blas_core().empty());
}

TEST(blas_core, the_suited_core_follows_the_cpu_and_only_replaces_a_generic_one) {
    EXPECT_EQ(suited_blas_core("Prescott", {true, true}), "SkylakeX");
    EXPECT_EQ(suited_blas_core("nehalem", {true, false}), "Haswell");
    EXPECT_EQ(suited_blas_core("Prescott", {false, false}), "");
    EXPECT_EQ(suited_blas_core("Haswell", {true, true}), ""); // a user's or OpenBLAS's AVX2 core
    EXPECT_EQ(suited_blas_core("SkylakeX", {true, true}), "");
}
