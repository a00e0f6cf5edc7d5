// The sm_90a building blocks one at a time, each against a CPU computation, so that a failing
// sm90 attention test can be traced to one piece: a TMA tile load (tma_desc, mbarrier,
// 128-byte swizzle, zero fill past the tensor), then S = Q K^T and O = P V exactly as the sm90
// forward issues them (fwd_scores_issue: wgmma SS on K-major descriptors; fwd_pv_issue: wgmma
// RS on the MN-major V with P packed by fwd_pack_p), read back through the documented
// accumulator layout. Inputs are small integers, so every product and sum is exact in fp32
// and the comparisons are exact. bf16 only (the fp16 instructions differ in one word; the
// attention tests cover them). Skips, saying why, without a device or where sm90 cannot run.
#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_fwd_sm90.cuh"
#include "kernels/cuda/tma_desc.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;
namespace sm90 = ringscale::kernels::cuda::sm90;
using bf16 = __nv_bfloat16;

namespace {

using ringscale::testing_support::small_ints;
using ringscale::testing_support::upload_bf16;

constexpr int n = 128;                // Q, K, V are 128 x 128 (one tile of the D = 128 kernel)
constexpr int tile_bytes = n * n * 2; // one of them in shared memory
constexpr int probe_smem = 3 * tile_bytes + 1024 + 64;

/// Loads one 128-row x 64-column box of `map` at (c0, c1, c2) and writes it back unswizzled.
__global__ void tma_probe(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2,
                          float* out) {
#if RINGSCALE_SM90A_DEVICE
    extern __shared__ unsigned char raw[];
    auto* tile = reinterpret_cast<bf16*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                         ~std::uintptr_t{1023});
    auto* bar = reinterpret_cast<std::uint64_t*>(tile + n * 64);
    if (threadIdx.x == 0) {
        sm90::mbarrier_init(bar, 1);
        sm90::mbarrier_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        sm90::mbarrier_arrive_expect_tx(bar, n * 64 * 2);
        sm90::tma_load_3d(tile, &map, bar, c0, c1, c2);
    }
    sm90::mbarrier_wait(bar, 0);
    for (int i = threadIdx.x; i < n * 64; i += blockDim.x) {
        const int r = i / 64, col = i % 64, chunk = col / 8;
        out[i] = __bfloat162float(tile[r * 64 + ((chunk ^ (r % 8)) * 8) + col % 8]);
    }
#else
    __trap();
#endif
}

/// One warpgroup: S = Q K^T (rows 0..63 of Q) and O = P V with P given, through the sm90
/// forward's own issue functions. s_out and o_out are [64][128] row-major; p_in too.
__global__ void gemm_probe(const __grid_constant__ CUtensorMap tq,
                           const __grid_constant__ CUtensorMap tk,
                           const __grid_constant__ CUtensorMap tv, const float* p_in, float* s_out,
                           float* o_out) {
#if RINGSCALE_SM90A_DEVICE
    extern __shared__ unsigned char raw[];
    auto* base = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                                  ~std::uintptr_t{1023});
    auto* sq = reinterpret_cast<bf16*>(base);
    auto* sk = reinterpret_cast<bf16*>(base + tile_bytes);
    auto* sv = reinterpret_cast<bf16*>(base + 2 * tile_bytes);
    auto* bar = reinterpret_cast<std::uint64_t*>(base + 3 * tile_bytes);
    if (threadIdx.x == 0) {
        sm90::mbarrier_init(bar, 1);
        sm90::mbarrier_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        sm90::mbarrier_arrive_expect_tx(bar, 3 * tile_bytes);
        for (int c = 0; c < 2; ++c) { // column blocks of 64, n rows apart
            sm90::tma_load_3d(sq + c * n * 64, &tq, bar, c * 64, 0, 0);
            sm90::tma_load_3d(sk + c * n * 64, &tk, bar, c * 64, 0, 0);
            sm90::tma_load_3d(sv + c * n * 64, &tv, bar, c * 64, 0, 0);
        }
    }
    sm90::mbarrier_wait(bar, 0);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Entry 4j + i of the accumulator: row 16 warp + lane / 4 + 8 (i / 2), col 8j + 2 (lane % 4)
    // + i % 2.
    auto at = [&](int k) {
        const int i = k % 4, j = k / 4;
        return (16 * warp + lane / 4 + 8 * (i / 2)) * n + 8 * j + 2 * (lane % 4) + i % 2;
    };
    float s[n / 2], o[n / 2];
    sm90::wgmma_fence();
    sm90::fwd_scores_issue<bf16, n>(s, sq, 0, sk);
    sm90::wgmma_wait<0>();
    sm90::wgmma_fence_operand(s);
    for (int k = 0; k < n / 2; ++k) {
        s_out[at(k)] = s[k];
        s[k] = p_in[at(k)];
        o[k] = 0.0f;
    }
    std::uint32_t pa[n / 16][4];
    sm90::fwd_pack_p<bf16, n>(pa, s);
    sm90::wgmma_fence_operand(o);
    sm90::wgmma_fence();
    sm90::fwd_pv_issue<bf16, n>(o, pa, sv);
    sm90::wgmma_wait<0>();
    sm90::wgmma_fence_operand(o);
    for (int k = 0; k < n / 2; ++k)
        o_out[at(k)] = o[k];
#else
    __trap();
#endif
}

/// Skip unless the sm90 kernels can run on device 0.
#define RINGSCALE_SKIP_WITHOUT_SM90()                                                              \
    RINGSCALE_SKIP_WITHOUT_DEVICE();                                                               \
    try {                                                                                          \
        ringscale::kernels::resolve_attention_path(ringscale::kernels::attn_path::sm90,            \
                                                   ringscale::kernels::sm90_compiled(),            \
                                                   device_cc(0), device_cc(1));                    \
    } catch (const ringscale::config_error& e) {                                                   \
        GTEST_SKIP() << e.what();                                                                  \
    }

int device_cc(int which) {
    int v = 0;
    cudaDeviceGetAttribute(
        &v, which == 0 ? cudaDevAttrComputeCapabilityMajor : cudaDevAttrComputeCapabilityMinor, 0);
    return v;
}

} // namespace

TEST(gpu_sm90_primitives, tma_loads_a_swizzled_box_and_zero_fills_past_the_tensor) {
    RINGSCALE_SKIP_WITHOUT_SM90();
    const int outer = 2, rows = 100, cols = 128; // the box (128 rows) runs past row 99
    const auto host = small_ints(static_cast<std::size_t>(outer * rows * cols), 1, 200);
    const auto dev = upload_bf16(host);
    const CUtensorMap map =
        kc::make_tma_desc_3d(kc::attn_dtype::bf16, dev.data(), outer, rows, cols, n, 64);
    rt::device_buffer<float> out(n * 64);
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(tma_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, probe_smem));
    tma_probe<<<1, 128, probe_smem>>>(map, 64, 0, 1, out.data());
    RINGSCALE_CUDA_CALL(cudaGetLastError());
    rt::device_synchronize();
    const auto got = out.to_host();
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < 64; ++c) {
            const float want = r < rows ? host[(1 * rows + r) * cols + 64 + c] : 0.0f;
            ASSERT_EQ(got[r * 64 + c], want) << "row " << r << " col " << c;
        }
}

TEST(gpu_sm90_primitives, wgmma_scores_and_pv_match_cpu_products) {
    RINGSCALE_SKIP_WITHOUT_SM90();
    const auto q = small_ints(n * n, 2, 5), k = small_ints(n * n, 3, 5),
               v = small_ints(n * n, 4, 5), p = small_ints(64 * n, 5, 3);
    const auto dq = upload_bf16(q), dk = upload_bf16(k), dv = upload_bf16(v);
    const rt::device_buffer<float> dp(p);
    auto map = [](const rt::device_buffer<std::uint16_t>& t) {
        return kc::make_tma_desc_3d(kc::attn_dtype::bf16, t.data(), 1, n, n, n, 64);
    };
    rt::device_buffer<float> s_out(64 * n), o_out(64 * n);
    RINGSCALE_CUDA_CALL(
        cudaFuncSetAttribute(gemm_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, probe_smem));
    gemm_probe<<<1, 128, probe_smem>>>(map(dq), map(dk), map(dv), dp.data(), s_out.data(),
                                       o_out.data());
    RINGSCALE_CUDA_CALL(cudaGetLastError());
    rt::device_synchronize();
    const auto s = s_out.to_host(), o = o_out.to_host();
    int bad_s = 0, bad_o = 0;
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < n; ++c) {
            float want_s = 0.0f, want_o = 0.0f; // exact: small integers
            for (int x = 0; x < n; ++x) {
                want_s += q[r * n + x] * k[c * n + x];
                want_o += p[r * n + x] * v[x * n + c];
            }
            if (s[r * n + c] != want_s && bad_s++ < 3)
                ADD_FAILURE() << "S[" << r << "][" << c << "] " << s[r * n + c] << " vs " << want_s;
            if (o[r * n + c] != want_o && bad_o++ < 3)
                ADD_FAILURE() << "O[" << r << "][" << c << "] " << o[r * n + c] << " vs " << want_o;
        }
    EXPECT_EQ(bad_s, 0) << "S = Q K^T entries wrong (K-major descriptors or accumulator layout)";
    EXPECT_EQ(bad_o, 0) << "O = P V entries wrong (MN-major V descriptor or the RS A layout)";
}
