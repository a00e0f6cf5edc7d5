// Token embedding: rows of a [vocab, dim] fp32 table gathered by integer token ids.
// Buffers are row-major and caller-owned.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringscale::kernels::cpu {

/// Throws config_error unless tokens > 0, vocab > 0, dim > 0 and every ids[t] is in [0, vocab).
void embedding_check(std::size_t tokens, std::size_t vocab, std::size_t dim,
                     const std::int32_t* ids);

/// out[t, :] = table[ids[t], :] for t < tokens. OVERWRITES out[tokens, dim]; reads
/// table[vocab, dim]. All ids are checked before anything is written.
void embedding_fwd(std::size_t tokens, std::size_t vocab, std::size_t dim, const float* table,
                   const std::int32_t* ids, float* out);

/// dtable[ids[t], :] += dout[t, :] for t < tokens: ACCUMULATED into dtable[vocab, dim]
/// (repeated ids sum; rows of ids not present are untouched). All ids are checked first, so
/// a bad id leaves dtable unchanged.
void embedding_bwd(std::size_t tokens, std::size_t vocab, std::size_t dim, const std::int32_t* ids,
                   const float* dout, float* dtable);

} // namespace ringscale::kernels::cpu
