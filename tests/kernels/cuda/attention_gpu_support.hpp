// Helpers of the CUDA attention kernel tests (test_attention_gpu.cpp, test_attention_mask_gpu.cpp):
// inputs seeded in fp32 and rounded to bf16 / fp16 on the device (so the double reference sees
// exactly the values the kernels read), the shape they share, and an elementwise check that
// reports its worst error.
//
// Tolerances, with u the unit roundoff of the input type (bf16 2^-8, fp16 2^-11): the kernels
// round P (and dS) to the input type before their GEMMs and accumulate in fp32, so
//   O:          |O - O_ref| <= 2u * max|V|     (P rounding moves O by at most u * max|V|)
//   LSE:        |LSE - LSE_ref| <= 1e-3        (scores and sums stay fp32; -inf exact)
//   dQ, dK, dV: |g - g_ref| <= 4u * max|g_ref| (P and dS rounding, errors add up randomly)
// A masking or fragment-layout bug moves values by O(max|ref|), far outside these.
#pragma once

#include "kernels/attention_shape.hpp"
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/attention_fwd.cuh"
#include "kernels/random.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace ringscale::test_attention {

using namespace ringscale::kernels;
using namespace ringscale::kernels::reference;
namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;
using pos_t = std::vector<std::int64_t>;
using kc::attn_dtype;

inline float unit_roundoff(attn_dtype dtype) {
    return dtype == attn_dtype::bf16 ? 0x1p-8f : 0x1p-11f;
}

inline pos_t iota_pos(std::int64_t n, std::int64_t first = 0) {
    pos_t p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), first);
    return p;
}

inline float max_abs(const std::vector<float>& x) {
    float m = 0.0f;
    for (const float v : x)
        m = std::isfinite(v) ? std::max(m, std::fabs(v)) : m;
    return m;
}

/// |got - want| <= tol everywhere (infinities must match exactly); reports the worst error
/// either way, so a first GPU run can calibrate the tolerances.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol,
                         const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    std::size_t bad = 0, worst_at = 0;
    float worst = 0.0f;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const bool inf = std::isinf(want[i]);
        const float err = inf ? (got[i] == want[i] ? 0.0f : INFINITY) : std::fabs(got[i] - want[i]);
        if (!(err <= worst)) { // also catches NaN
            worst = std::isnan(err) ? INFINITY : err;
            worst_at = i;
        }
        if (!(err <= tol) && bad++ < 3)
            ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs ref " << want[i];
    }
    std::printf("[   info   ] %-6s max |err| %.3g at %zu (tol %.3g)\n", what.c_str(), worst,
                worst_at, tol);
    EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " outside " << tol;
}

/// A tensor on the device in the input type, and the fp32 values it holds (the seeded fp32
/// values rounded to nearest-even by the device, widened back).
struct dev_input {
    rt::device_buffer<std::uint16_t> data;
    std::vector<float> rounded;
};

inline dev_input to_device(const std::vector<float>& host, attn_dtype dtype) {
    rt::device_buffer<float> f32(host);
    dev_input t{rt::device_buffer<std::uint16_t>(host.size()), {}};
    kc::to_attn_dtype_cuda(dtype, host.size(), f32.data(), t.data.data());
    kc::from_attn_dtype_cuda(dtype, host.size(), t.data.data(), f32.data());
    t.rounded = f32.to_host();
    return t;
}

inline std::vector<float> seeded(std::int64_t n, std::uint64_t seed, float scale) {
    std::vector<float> v(static_cast<std::size_t>(n));
    fill_uniform(v.data(), v.size(), seed, 0, scale);
    return v;
}

/// B=2, H=4, Hkv=2 (GQA), sizes not multiples of any tile. Q, K in [-2, 2) (peaked softmax),
/// V, dO in [-1, 1).
inline attention_shape make_shape(std::int64_t q_len, std::int64_t k_len, std::int64_t head_dim,
                                  bool causal) {
    attention_shape s;
    s.batch = 2;
    s.heads = 4;
    s.kv_heads = 2;
    s.q_len = q_len;
    s.k_len = k_len;
    s.head_dim = head_dim;
    s.causal = causal;
    return s;
}

struct ref_fwd {
    std::vector<float> o, lse;
};

inline ref_fwd reference_fwd(const attention_shape& s, const std::vector<float>& q,
                             const std::vector<float>& k, const std::vector<float>& v,
                             const pos_t& qp, const pos_t& kp) {
    ref_fwd r{std::vector<float>(q.size()), std::vector<float>(s.batch * s.heads * s.q_len)};
    attention_fwd_ref(s, q.data(), k.data(), v.data(), qp.data(), kp.data(), r.o.data(),
                      r.lse.data());
    return r;
}

} // namespace ringscale::test_attention
