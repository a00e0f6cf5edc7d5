// The attention path's parse and resolve logic (no GPU needed): which kernels a request
// gives on which build and device, and the one-line refusals.
#include "kernels/attention_path.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::kernels;

TEST(AttentionPath, ParseRoundTrips) {
    for (const attn_path p : {attn_path::automatic, attn_path::sm80, attn_path::sm90})
        EXPECT_EQ(parse_attn_path(to_string(p)), p);
    EXPECT_STREQ(to_string(attn_path::automatic), "auto");
}

TEST(AttentionPath, ParseRefusesOtherNames) {
    for (const char* bad : {"", "AUTO", "sm90a", "sm_90", "hopper"}) {
        try {
            parse_attn_path(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const config_error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("--attn-kernel"), std::string::npos) << what;
            EXPECT_NE(what.find("auto, sm80 or sm90"), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
}

TEST(AttentionPath, AutomaticPicksSm90OnlyOnHopperWithSm90aBuilt) {
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, true, 9, 0), attn_path::sm90);
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, false, 9, 0), attn_path::sm80);
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, true, 8, 0), attn_path::sm80);
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, true, 8, 9), attn_path::sm80);
    // sm_90a code does not run on later architectures (Blackwell is 10.0 / 12.0).
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, true, 10, 0), attn_path::sm80);
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, true, 12, 0), attn_path::sm80);
}

TEST(AttentionPath, Sm80IsAlwaysHonoured) {
    EXPECT_EQ(resolve_attention_path(attn_path::sm80, true, 9, 0), attn_path::sm80);
    EXPECT_EQ(resolve_attention_path(attn_path::sm80, false, 8, 0), attn_path::sm80);
}

TEST(AttentionPath, ForcedSm90RefusesWhatCannotRunIt) {
    EXPECT_EQ(resolve_attention_path(attn_path::sm90, true, 9, 0), attn_path::sm90);
    try {
        resolve_attention_path(attn_path::sm90, false, 9, 0);
        ADD_FAILURE() << "sm90 accepted by a build without sm_90a";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("90a"), std::string::npos) << e.what();
    }
    try {
        resolve_attention_path(attn_path::sm90, true, 8, 0);
        ADD_FAILURE() << "sm90 accepted on compute capability 8.0";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("this one is 8.0"), std::string::npos) << e.what();
    }
}

TEST(AttentionPath, RequestIsProcessWide) {
    EXPECT_EQ(attention_path(), attn_path::automatic); // the default
    set_attention_path(attn_path::sm80);
    EXPECT_EQ(attention_path(), attn_path::sm80);
    set_attention_path(attn_path::automatic);
    EXPECT_EQ(attention_path(), attn_path::automatic);
}

TEST(AttentionPath, CompiledMatchesTheBuild) {
#ifdef RINGSCALE_HAVE_SM90A
    EXPECT_TRUE(sm90_compiled());
#else
    EXPECT_FALSE(sm90_compiled());
#endif
}
