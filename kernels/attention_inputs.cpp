#include "kernels/attention_inputs.hpp"

#include "kernels/random.hpp"
#include "src/base/error.hpp"

#include <cmath>

namespace ringscale::kernels {

namespace {

// The outliers kind (attention_inputs.hpp): massive channels 4x (Q, K) and 8x (V); the sink
// key's channel +48 (exact in bf16 and fp16), queries 1 to 3 in it.
constexpr float k_qk_massive = 4.0f, k_v_massive = 8.0f, k_sink = 48.0f;

} // namespace

const char* input_kind_name(input_kind k) {
    return k == input_kind::outliers ? "outliers" : "uniform";
}

input_kind parse_input_kind(const std::string& text) {
    for (input_kind k : {input_kind::uniform, input_kind::outliers})
        if (text == input_kind_name(k))
            return k;
    throw config_error("--inputs: '" + text + "' is not uniform or outliers");
}

outlier_channels outlier_channels_of(const attention_inputs& in) {
    // Four distinct channels: draw each in turn from the channels not taken yet.
    const auto d = static_cast<std::uint64_t>(in.head_dim);
    std::int64_t taken[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4 && d >= 4; ++i) {
        auto c = static_cast<std::int64_t>(mix64(in.seed * 16 + 0x0c5e + i) % (d - i));
        for (bool moved = true; moved;) { // skip the ones taken, in increasing order
            moved = false;
            for (int t = 0; t < i; ++t)
                if (taken[t] == c) {
                    ++c;
                    moved = true;
                }
        }
        taken[i] = c;
    }
    outlier_channels ch;
    ch.q_k[0] = taken[0];
    ch.q_k[1] = taken[1];
    ch.v = taken[2];
    ch.sink = taken[3];
    return ch;
}

void attention_input_row(const attention_inputs& in, attention_tensor t, std::int64_t b,
                         std::int64_t h, std::int64_t heads, std::int64_t pos, float* out) {
    const std::uint64_t stream = mix64(in.seed * 8 + static_cast<std::uint64_t>(t));
    // Q and K scaled so scores span a few units: softmax neither flat nor one-hot.
    const float scale = (t == attention_tensor::q || t == attention_tensor::k) ? 2.0f : 1.0f;
    const std::int64_t d = in.head_dim;
    const std::int64_t global_row = (b * heads + h) * in.seq_len + pos;
    fill_uniform(out, static_cast<std::size_t>(d), stream,
                 static_cast<std::uint64_t>(global_row * d), scale);
    if (in.kind != input_kind::outliers || d < 4)
        return;
    const outlier_channels ch = outlier_channels_of(in);
    switch (t) {
    case attention_tensor::q:
        out[ch.q_k[0]] *= k_qk_massive;
        out[ch.q_k[1]] *= k_qk_massive;
        out[ch.sink] = 1.0f + std::fabs(out[ch.sink]); // 1 to 3: every query leans in
        break;
    case attention_tensor::k:
        out[ch.q_k[0]] *= k_qk_massive;
        out[ch.q_k[1]] *= k_qk_massive;
        if (pos == 0)
            out[ch.sink] = k_sink;
        break;
    case attention_tensor::v:
        out[ch.v] *= k_v_massive;
        break;
    case attention_tensor::d_out:
        break;
    }
}

} // namespace ringscale::kernels
