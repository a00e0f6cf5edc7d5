// The launcher's attention kernel line (src/launcher/attn_note.hpp): once per (kernel, note)
// per launch, a case's differing note once too, nothing without a kernel, escaped.
#include "src/launcher/attn_note.hpp"

#include <gtest/gtest.h>

using ringscale::attn_kernel_notes;

TEST(attn_kernel_notes, the_launch_note_shows_once_however_many_cases) {
    attn_kernel_notes notes;
    const std::string why = "auto: sm90 on this compute capability 9.0 GPU";
    EXPECT_EQ(notes.line("sm90", why), "# attention kernel sm90: " + why + "\n");
    for (int c = 0; c < 5; ++c)
        EXPECT_EQ(notes.line("sm90", why), "") << "case " << c;
}

TEST(attn_kernel_notes, a_case_that_differs_shows_its_own_note_once) {
    attn_kernel_notes notes;
    EXPECT_NE(notes.line("sm90", "auto"), "");
    const std::string masked = "a mask beyond causal runs the sm80 kernels";
    EXPECT_EQ(notes.line("sm80", masked), "# attention kernel sm80: " + masked + "\n");
    EXPECT_EQ(notes.line("sm80", masked), "");
    EXPECT_EQ(notes.line("sm90", "auto"), "");
    EXPECT_NE(notes.line("sm80", "another reason"), ""); // a new reason is news
}

TEST(attn_kernel_notes, nothing_without_a_kernel_and_no_colon_without_a_note) {
    attn_kernel_notes notes;
    EXPECT_EQ(notes.line("", "a note"), "");
    EXPECT_EQ(notes.line("cudnn", ""), "# attention kernel cudnn\n");
}

TEST(attn_kernel_notes, a_hostile_note_stays_on_one_line) {
    attn_kernel_notes notes;
    const std::string got = notes.line("sm80", "a\nb\x1b[2J");
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.find('\n'), got.size() - 1) << got;
    EXPECT_EQ(got.find('\x1b'), std::string::npos) << got;
}
