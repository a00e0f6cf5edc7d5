// The sm_90a attention backward's GEMMs one step at a time, each against exact CPU products,
// so a failing sm90 backward test can be traced to a layout rather than the pipeline: two
// consumer warpgroups load K, V (128 keys) and Q, dO (64 rows) by TMA into the kernel's own
// shared-memory map, then run the kernel's own pieces (attention_bwd_sm90.cuh): scores (S^T =
// K_w Q^T, dP^T = V_w dO^T; K-major SS), then, from given P^T and dS^T, pack_k64, store_ds and
// grads (dV += P^T dO and dK += dS^T Q: RS on MN-major B; dQ = dS K: SS on MN-major A and B).
// Small-integer inputs make every product exact in fp32. bf16, D = 64 and 128. Skips, saying
// why, without a device or where sm90 cannot run. Not yet run on a GPU.
#include "kernels/attention_path.hpp"
#include "kernels/cuda/attention_bwd_sm90.cuh"
#include "kernels/cuda/tma_desc.hpp"
#include "src/base/cuda_runtime/cuda_check.hpp"
#include "src/base/error.hpp"
#include "tests/support/gpu_test_support.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kc = ringscale::kernels::cuda;
namespace rt = ringscale::cuda_runtime;
namespace sm90 = ringscale::kernels::cuda::sm90;
namespace bwd90 = ringscale::kernels::cuda::bwd90;
using bf16 = __nv_bfloat16;

namespace {

using ringscale::testing_support::small_ints;
using ringscale::testing_support::upload_bf16;

constexpr int keys = bwd90::keys, rows = bwd90::rows;

/// Outputs, all row-major fp32: st, dpt [keys][rows] (S^T, dP^T); dv, dk [keys][D];
/// dq [2][rows][64] (warpgroup w's 64 dQ columns: D = 128 columns 64 w.. over all keys;
/// D = 64 all columns over keys 64 w..). p_in, ds_in [keys][rows] are P^T and dS^T.
struct probe_out {
    float *st, *dpt, *dv, *dk, *dq;
};

template <int D>
__global__ void
bwd_pieces_probe(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                 const __grid_constant__ CUtensorMap tv, const __grid_constant__ CUtensorMap tdo,
                 const float* p_in, const float* ds_in, probe_out out) {
#if RINGSCALE_SM90A_DEVICE
    using L = bwd90::layout<D>;
    extern __shared__ unsigned char raw[];
    auto* sm = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                                ~std::uintptr_t{1023});
    auto* bar = reinterpret_cast<std::uint64_t*>(sm + L::bars);
    if (threadIdx.x == 0) {
        sm90::mbarrier_init(bar, 1);
        sm90::mbarrier_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) { // stage 0 of Q and dO
        sm90::mbarrier_arrive_expect_tx(bar, 2 * L::kv_tile + 2 * L::q_tile);
        for (int c = 0; c < D / 64; ++c) {
            sm90::tma_load_3d(sm + L::k + bwd90::col_block_offset(c, keys), &tk, bar, 64 * c, 0, 0);
            sm90::tma_load_3d(sm + L::v + bwd90::col_block_offset(c, keys), &tv, bar, 64 * c, 0, 0);
            sm90::tma_load_3d(sm + L::q + bwd90::col_block_offset(c, rows), &tq, bar, 64 * c, 0, 0);
            sm90::tma_load_3d(sm + L::d_o + bwd90::col_block_offset(c, rows), &tdo, bar, 64 * c, 0,
                              0);
        }
    }
    sm90::mbarrier_wait(bar, 0);
    const int w = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
    // Entry 4j + i of an m64nN accumulator: row 16 warp + lane / 4 + 8 (i / 2), column 8j +
    // 2 (lane % 4) + i % 2.
    const auto acc_row = [&](int k) { return 16 * warp + lane / 4 + 8 * ((k % 4) / 2); };
    const auto acc_col = [&](int k) { return 8 * (k / 4) + 2 * (lane % 4) + k % 2; };
    float s[32], dp[32];
    bwd90::scores<bf16, D>(s, dp, sm, w, 0);
    for (int k = 0; k < 32; ++k) {
        const int at = (64 * w + acc_row(k)) * rows + acc_col(k);
        out.st[at] = s[k];
        out.dpt[at] = dp[k];
        s[k] = p_in[at];
        dp[k] = ds_in[at];
    }
    std::uint32_t pa[4][4], dsa[4][4];
    bwd90::pack_k64<bf16>(pa, s);
    bwd90::pack_k64<bf16>(dsa, dp);
    unsigned char* ds = sm + L::ds;
    bwd90::store_ds(ds, dsa, w, warp, lane);
    sm90::fence_proxy_async();
    sm90::named_barrier_sync(1, 256);
    float dv[D / 2] = {}, dk[D / 2] = {}, dq[32];
    bwd90::grads<bf16, D>(dv, dk, dq, pa, dsa, sm, ds, w, 0);
    for (int k = 0; k < D / 2; ++k) {
        const int at = (64 * w + acc_row(k)) * D + acc_col(k);
        out.dv[at] = dv[k];
        out.dk[at] = dk[k];
    }
    for (int k = 0; k < 32; ++k)
        out.dq[(w * rows + acc_row(k)) * 64 + acc_col(k)] = dq[k];
#else
    __trap();
#endif
}

int device_cc(int which) {
    int v = 0;
    cudaDeviceGetAttribute(
        &v, which == 0 ? cudaDevAttrComputeCapabilityMajor : cudaDevAttrComputeCapabilityMinor, 0);
    return v;
}

/// Count (and report the first few of) entries of `got` that differ from `want`.
int count_bad(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    int bad = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i] && bad++ < 3)
            ADD_FAILURE() << what << "[" << i << "] " << got[i] << " vs " << want[i];
    return bad;
}

template <int D>
void run_probe() {
    const auto q = small_ints(rows * D, 2, 5), k = small_ints(keys * D, 3, 5),
               v = small_ints(keys * D, 4, 5), d_o = small_ints(rows * D, 5, 5),
               p = small_ints(keys * rows, 6, 3), ds = small_ints(keys * rows, 7, 3);
    const auto gq = upload_bf16(q), gk = upload_bf16(k), gv = upload_bf16(v),
               gdo = upload_bf16(d_o);
    const rt::device_buffer<float> gp(p), gds(ds);
    auto map = [](const rt::device_buffer<std::uint16_t>& t, int n_rows) {
        return kc::make_tma_desc_3d(kc::attn_dtype::bf16, t.data(), 1, n_rows, D, n_rows, 64);
    };
    rt::device_buffer<float> st(keys * rows), dpt(keys * rows), dv(keys * D), dk(keys * D),
        dq(2 * rows * 64);
    constexpr int smem = bwd90::layout<D>::alloc;
    RINGSCALE_CUDA_CALL(cudaFuncSetAttribute(bwd_pieces_probe<D>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    bwd_pieces_probe<D><<<1, 256, smem>>>(map(gq, rows), map(gk, keys), map(gv, keys),
                                          map(gdo, rows), gp.data(), gds.data(),
                                          {st.data(), dpt.data(), dv.data(), dk.data(), dq.data()});
    RINGSCALE_CUDA_CALL(cudaGetLastError());
    rt::device_synchronize();

    std::vector<float> want_st(keys * rows), want_dpt(keys * rows), want_dv(keys * D),
        want_dk(keys * D), want_dq(2 * rows * 64);
    for (int j = 0; j < keys; ++j)
        for (int i = 0; i < rows; ++i)
            for (int d = 0; d < D; ++d) {
                want_st[j * rows + i] += k[j * D + d] * q[i * D + d];
                want_dpt[j * rows + i] += v[j * D + d] * d_o[i * D + d];
                want_dv[j * D + d] += p[j * rows + i] * d_o[i * D + d];
                want_dk[j * D + d] += ds[j * rows + i] * q[i * D + d];
            }
    for (int w = 0; w < 2; ++w)
        for (int i = 0; i < rows; ++i)
            for (int c = 0; c < 64; ++c) {
                const int col = D == 128 ? 64 * w + c : c;
                const int j_begin = D == 128 ? 0 : 64 * w, j_end = D == 128 ? keys : 64 * w + 64;
                for (int j = j_begin; j < j_end; ++j)
                    want_dq[(w * rows + i) * 64 + c] += ds[j * rows + i] * k[j * D + col];
            }
    const std::string d = " D=" + std::to_string(D);
    EXPECT_EQ(count_bad(st.to_host(), want_st, "S^T"), 0) << "K-major SS operands" << d;
    EXPECT_EQ(count_bad(dpt.to_host(), want_dpt, "dP^T"), 0) << "K-major SS operands" << d;
    EXPECT_EQ(count_bad(dv.to_host(), want_dv, "dV"), 0) << "RS A packing / MN-major dO" << d;
    EXPECT_EQ(count_bad(dk.to_host(), want_dk, "dK"), 0) << "RS A packing / MN-major Q" << d;
    EXPECT_EQ(count_bad(dq.to_host(), want_dq, "dQ"), 0) << "dS^T stores / MN-major A, K" << d;
}

} // namespace

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

TEST(gpu_attention_bwd_sm90_pieces, d64_gemms_match_exact_cpu_products) {
    RINGSCALE_SKIP_WITHOUT_SM90();
    run_probe<64>();
}

TEST(gpu_attention_bwd_sm90_pieces, d128_gemms_match_exact_cpu_products) {
    RINGSCALE_SKIP_WITHOUT_SM90();
    run_probe<128>();
}
