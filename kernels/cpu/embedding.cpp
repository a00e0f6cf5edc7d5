#include "kernels/cpu/embedding.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <string>

namespace ringscale::kernels::cpu {

void embedding_check(std::size_t tokens, std::size_t vocab, std::size_t dim,
                     const std::int32_t* ids) {
    RINGSCALE_REQUIRE(tokens > 0 && vocab > 0 && dim > 0,
                      "embedding: tokens, vocab and dim must be > 0");
    for (std::size_t t = 0; t < tokens; ++t)
        RINGSCALE_REQUIRE(ids[t] >= 0 && static_cast<std::size_t>(ids[t]) < vocab,
                          "embedding: token id " + std::to_string(ids[t]) + " at position " +
                              std::to_string(t) + " is outside [0, " + std::to_string(vocab) + ")");
}

void embedding_fwd(std::size_t tokens, std::size_t vocab, std::size_t dim, const float* table,
                   const std::int32_t* ids, float* out) {
    embedding_check(tokens, vocab, dim, ids);
    for (std::size_t t = 0; t < tokens; ++t) {
        const float* row = table + static_cast<std::size_t>(ids[t]) * dim;
        std::copy(row, row + dim, out + t * dim);
    }
}

void embedding_bwd(std::size_t tokens, std::size_t vocab, std::size_t dim, const std::int32_t* ids,
                   const float* dout, float* dtable) {
    embedding_check(tokens, vocab, dim, ids);
    for (std::size_t t = 0; t < tokens; ++t) {
        float* row = dtable + static_cast<std::size_t>(ids[t]) * dim;
        const float* src = dout + t * dim;
        for (std::size_t j = 0; j < dim; ++j)
            row[j] += src[j];
    }
}

} // namespace ringscale::kernels::cpu
