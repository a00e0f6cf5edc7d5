// The attention path's parse and resolve logic (no GPU needed): which kernels a request
// gives on which build and device, and the one-line refusals.
#include "kernels/attention_path.hpp"
#include "src/base/error.hpp"

#include <gtest/gtest.h>

using namespace ringscale;
using namespace ringscale::kernels;

TEST(AttentionPath, ParseRoundTrips) {
    for (const attn_path p :
         {attn_path::automatic, attn_path::sm80, attn_path::sm90, attn_path::cudnn})
        EXPECT_EQ(parse_attn_path(to_string(p)), p);
    EXPECT_STREQ(to_string(attn_path::automatic), "auto");
    EXPECT_STREQ(to_string(attn_path::cudnn), "cudnn");
}

TEST(AttentionPath, ParseRefusesOtherNames) {
    for (const char* bad : {"", "AUTO", "sm90a", "sm_90", "hopper", "CUDNN", "cudnn9"}) {
        try {
            parse_attn_path(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const config_error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("--attn-kernel"), std::string::npos) << what;
            EXPECT_NE(what.find("auto, sm80, sm90 or cudnn"), std::string::npos) << what;
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

// cudnn is asked for by name: auto never resolves to it; it resolves to itself where cuDNN is
// compiled and the device is 8.0 or newer, and is refused with one line otherwise.
TEST(AttentionPath, CudnnByNameOnly) {
    for (const int major : {8, 9, 10})
        for (const bool sm90 : {false, true}) {
            EXPECT_NE(resolve_attention_path(attn_path::automatic, sm90, true, major, 0),
                      attn_path::cudnn);
            EXPECT_EQ(resolve_attention_path(attn_path::cudnn, sm90, true, major, 0),
                      attn_path::cudnn);
        }
    EXPECT_EQ(resolve_attention_path(attn_path::automatic, true, true, 9, 0), attn_path::sm90);
    EXPECT_EQ(resolve_attention_path(attn_path::sm80, true, true, 9, 0), attn_path::sm80);
}

TEST(AttentionPath, CudnnRefusals) {
    try {
        resolve_attention_path(attn_path::cudnn, true, false, 9, 0);
        ADD_FAILURE() << "cudnn resolved on a build without cuDNN";
    } catch (const not_compiled_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("--attn-kernel cudnn"), std::string::npos) << what;
        EXPECT_NE(what.find("not compiled"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    // The four-argument form knows of no cuDNN: not compiled there too.
    EXPECT_THROW(resolve_attention_path(attn_path::cudnn, true, 9, 0), not_compiled_error);
    try {
        resolve_attention_path(attn_path::cudnn, false, true, 7, 5);
        ADD_FAILURE() << "cudnn resolved on a 7.5 device";
    } catch (const config_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("8.0"), std::string::npos) << what;
        EXPECT_NE(what.find("7.5"), std::string::npos) << what;
    }
    EXPECT_NO_THROW(check_attention_path_compiled(attn_path::cudnn, true));
    EXPECT_NO_THROW(check_attention_path_compiled(attn_path::sm80, false));
    EXPECT_THROW(check_attention_path_compiled(attn_path::cudnn, false), not_compiled_error);
}

// The build says whether it has cuDNN, and the versions it records follow.
TEST(AttentionPath, CudnnCompiledMatchesTheBuild) {
#ifdef RINGSCALE_HAVE_CUDNN
    EXPECT_TRUE(cudnn_compiled());
    EXPECT_NE(cudnn_frontend_version(), "");
#else
    EXPECT_FALSE(cudnn_compiled());
    EXPECT_EQ(cudnn_frontend_version(), "");
    EXPECT_EQ(cudnn_runtime_version(), "");
#endif
}
