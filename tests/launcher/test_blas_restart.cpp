// The OpenBLAS restart note (src/launcher/blas_restart.hpp) only where this very process
// restarted: a mark inherited empty, from another process or set by hand makes no note, even
// with OPENBLAS_CORETYPE set.
#include "src/launcher/blas_restart.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

using namespace ringscale;

TEST(blas_restart, the_mark_names_this_process) {
    EXPECT_EQ(restarted_from("Prescott@4242", 4242), "Prescott");
    EXPECT_EQ(restarted_from("Prescott@4242", 424), "");
    EXPECT_EQ(restarted_from("Prescott@14242", 4242), "");
    EXPECT_EQ(restarted_from("@4242", 4242), "");
    EXPECT_EQ(restarted_from("", 4242), "");
    EXPECT_EQ(restarted_from("Prescott", 4242), "");
    EXPECT_EQ(restarted_from(nullptr, 4242), "");
}

TEST(blas_restart, no_note_without_this_restart) {
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    setenv(blas_restart_env, "", 1); // inherited empty: the launcher did not restart
    EXPECT_EQ(blas_restart_note(), "");
    setenv(blas_restart_env, "Prescott", 1); // set by hand, or an older launcher's
    EXPECT_EQ(blas_restart_note(), "");
    setenv(blas_restart_env, ("Prescott@" + std::to_string(getpid() + 1)).c_str(), 1);
    EXPECT_EQ(blas_restart_note(), "");
    setenv(blas_restart_env, ("Prescott@" + std::to_string(getpid())).c_str(), 1);
    const std::string note = blas_restart_note();
    EXPECT_NE(note.find("OpenBLAS chose its 'Prescott' kernels"), std::string::npos) << note;
    EXPECT_NE(note.find("OPENBLAS_CORETYPE=Haswell"), std::string::npos) << note;
    unsetenv(blas_restart_env);
    unsetenv("OPENBLAS_CORETYPE");
}
