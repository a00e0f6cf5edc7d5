// The seeded inputs of the attention jobs, addressed by position: element (b, h, pos, j) of a
// global Q, K, V or dO has one value whichever rank computes it, so each rank fills only its
// shard and the references (single-rank, fp64 sampled) regenerate any row alone. Two kinds
// (DESIGN.md, "Inputs"):
//   uniform:  Q, K uniform in [-2, 2), V, dO in [-1, 1) (what every launch ran before);
//   outliers: the same plus what real activations have: two massive channels of Q and K (4x)
//             and one of V (8x), and an attention sink: the first token's key carries +48 in a
//             sink channel in which every query is positive (1 to 3), so it draws a large share
//             of every row's softmax mass, growing with the query's sink component.
#pragma once

#include <cstdint>
#include <string>

namespace ringscale::kernels {

enum class input_kind { uniform, outliers };

/// "uniform", "outliers".
const char* input_kind_name(input_kind k);
/// Parse a name of input_kind_name; config_error naming the choices otherwise.
input_kind parse_input_kind(const std::string& text);

/// The global tensors (the order seeds each one's stream).
enum class attention_tensor { q, k, v, d_out };

/// What fixes every value: the kind, the seed, and the tensors' sequence length and head size.
struct attention_inputs {
    input_kind kind = input_kind::uniform;
    std::uint64_t seed = 1;
    std::int64_t seq_len = 0;
    std::int64_t head_dim = 64;
};

/// The channels the outliers kind makes large (q_k: two of Q and K; v: one of V) and the sink
/// channel, distinct, drawn from the seed.
struct outlier_channels {
    std::int64_t q_k[2] = {0, 0};
    std::int64_t v = 0;
    std::int64_t sink = 0;
};
outlier_channels outlier_channels_of(const attention_inputs& in);

/// out [head_dim] = row `pos` of tensor `t` at batch `b`, head `h` of `heads` (the tensor's own
/// head count: kv heads for K and V), in fp32, not rounded to any dtype.
void attention_input_row(const attention_inputs& in, attention_tensor t, std::int64_t b,
                         std::int64_t h, std::int64_t heads, std::int64_t pos, float* out);

} // namespace ringscale::kernels
