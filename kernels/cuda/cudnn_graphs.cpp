// The cuDNN frontend graphs of one SDPA call (kernels/cuda/cudnn_graphs.hpp).
#include "kernels/cuda/cudnn_graphs.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <vector>

namespace ringscale::kernels::cuda {

namespace {

namespace fe = cudnn_frontend;
using tensor = std::shared_ptr<fe::graph::Tensor_attributes>;

fe::DataType_t io_type(attn_dtype_kind dtype) {
    switch (dtype) {
    case attn_dtype_kind::bf16:
        return fe::DataType_t::BFLOAT16;
    case attn_dtype_kind::fp16:
        return fe::DataType_t::HALF;
    case attn_dtype_kind::fp8:
        return fe::DataType_t::FP8_E4M3;
    default:
        throw config_error("cuDNN attention takes bf16, fp16 or fp8, not fp32");
    }
}

std::vector<std::int64_t> dims_of(const cudnn_tensor_view& v) {
    return {v.dims[0], v.dims[1], v.dims[2], v.dims[3]};
}

std::vector<std::int64_t> strides_of(const cudnn_tensor_view& v) {
    return {v.strides[0], v.strides[1], v.strides[2], v.strides[3]};
}

tensor input(fe::graph::Graph& g, const char* name, std::int64_t id, const cudnn_tensor_view& v) {
    return g.tensor(fe::graph::Tensor_attributes()
                        .set_name(name)
                        .set_uid(id)
                        .set_dim(dims_of(v))
                        .set_stride(strides_of(v)));
}

void output(const tensor& t, std::int64_t id, const cudnn_tensor_view& v) {
    t->set_output(true).set_uid(id).set_dim(dims_of(v)).set_stride(strides_of(v));
}

// An fp32 scalar of the fp8 graph ([1, 1, 1, 1]).
tensor scalar(fe::graph::Graph& g, const char* name, std::int64_t id) {
    return g.tensor(fe::graph::Tensor_attributes()
                        .set_name(name)
                        .set_uid(id)
                        .set_dim({1, 1, 1, 1})
                        .set_stride({1, 1, 1, 1})
                        .set_data_type(fe::DataType_t::FLOAT));
}

void scalar_output(const tensor& t, std::int64_t id) {
    t->set_output(true)
        .set_uid(id)
        .set_dim({1, 1, 1, 1})
        .set_stride({1, 1, 1, 1})
        .set_data_type(fe::DataType_t::FLOAT);
}

// cuDNN's band: the alignment, then the bounds that are set (right 0 is causal).
template <typename Attributes>
void set_band(Attributes& a, const cudnn_band& band) {
    if (cudnn_band_full(band))
        return;
    a.set_diagonal_alignment(band.align == cudnn_align::bottom_right
                                 ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                 : fe::DiagonalAlignment_t::TOP_LEFT);
    if (band.right >= 0)
        a.set_diagonal_band_right_bound(static_cast<int>(band.right));
    if (band.left > 0)
        a.set_diagonal_band_left_bound(static_cast<int>(band.left));
}

std::shared_ptr<fe::graph::Graph> new_graph(attn_dtype_kind dtype) {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(io_type(dtype))
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    return g;
}

// The backward graph's inputs: Q, K, V, O, dO, stats.
struct bwd_inputs {
    tensor q, k, v, o, d_o, stats;
};

// sdpa_fp8_backward: every fp8 tensor E4M3 (the graph's io type), dQ, dK, dV written in E4M3
// at their scales (Hopper's fp8 backward writes fp8 only), the four amax as outputs.
std::shared_ptr<fe::graph::Graph> fp8_bwd_graph(std::shared_ptr<fe::graph::Graph> g,
                                                const cudnn_sdpa_call& c, const bwd_inputs& in) {
    auto opts = fe::graph::SDPA_fp8_backward_attributes()
                    .set_name("sdpa_fp8_bwd")
                    .set_attn_scale(attention_scale(c.shape));
    // Hopper's fp8 backward takes no bottom-right causal mask: the same band from the top left
    // (key j seen by row i while j - i <= k_len - q_len).
    cudnn_band band = c.call.band;
    if (band.align == cudnn_align::bottom_right && band.right == 0 && band.left <= 0 &&
        c.call.k_len > c.call.q_len) {
        band.align = cudnn_align::top_left;
        band.right = c.call.k_len - c.call.q_len;
    }
    set_band(opts, band);
    auto [dq, dk, dv, amax_dq, amax_dk, amax_dv, amax_dp] = g->sdpa_fp8_backward(
        in.q, in.k, in.v, in.o, in.d_o, in.stats, scalar(*g, "descale_q", uid::descale_q),
        scalar(*g, "descale_k", uid::descale_k), scalar(*g, "descale_v", uid::descale_v),
        scalar(*g, "descale_o", uid::descale_o), scalar(*g, "descale_do", uid::descale_do),
        scalar(*g, "descale_s", uid::descale_s), scalar(*g, "descale_dp", uid::descale_dp),
        scalar(*g, "scale_s", uid::scale_s), scalar(*g, "scale_dq", uid::scale_dq),
        scalar(*g, "scale_dk", uid::scale_dk), scalar(*g, "scale_dv", uid::scale_dv),
        scalar(*g, "scale_dp", uid::scale_dp), opts);
    output(dq, uid::dq, cudnn_q_view(c.shape, c.call));
    output(dk, uid::dk, cudnn_kv_view(c.shape, c.call));
    output(dv, uid::dv, cudnn_kv_view(c.shape, c.call));
    scalar_output(amax_dq, uid::amax_dq);
    scalar_output(amax_dk, uid::amax_dk);
    scalar_output(amax_dv, uid::amax_dv);
    scalar_output(amax_dp, uid::amax_dp);
    check_frontend(g->validate(), "validate (fp8 backward)");
    return g;
}

} // namespace

std::size_t cudnn_elem_bytes(attn_dtype_kind dtype) {
    return dtype == attn_dtype_kind::fp8 ? 1 : dtype == attn_dtype_kind::fp32 ? 4 : 2;
}

void check_frontend(cudnn_frontend::error_t status, const char* what) {
    if (status.is_good())
        return;
    std::string message = status.get_message();
    std::replace(message.begin(), message.end(), '\n', ' ');
    throw error(error_kind::cuda, fmt::format("cuDNN {}: {}", what, message));
}

std::shared_ptr<fe::graph::Graph> build_sdpa_fwd_graph(const cudnn_sdpa_call& c) {
    auto g = new_graph(c.dtype);
    const auto qv = cudnn_q_view(c.shape, c.call), kv = cudnn_kv_view(c.shape, c.call);
    const auto sv = cudnn_stats_view(c.shape, c.call);
    const tensor q = input(*g, "Q", uid::q, qv), k = input(*g, "K", uid::k, kv);
    const tensor v = input(*g, "V", uid::v, kv);
    auto opts = fe::graph::SDPA_attributes()
                    .set_name("sdpa_fwd")
                    .set_generate_stats(true)
                    .set_attn_scale(attention_scale(c.shape));
    set_band(opts, c.call.band);
    tensor o, stats;
    if (c.dtype == attn_dtype_kind::fp8) {
        auto [o8, stats8, amax_s, amax_o] = g->sdpa_fp8(
            q, k, v, scalar(*g, "descale_q", uid::descale_q),
            scalar(*g, "descale_k", uid::descale_k), scalar(*g, "descale_v", uid::descale_v),
            scalar(*g, "descale_s", uid::descale_s), scalar(*g, "scale_s", uid::scale_s),
            scalar(*g, "scale_o", uid::scale_o), opts);
        scalar_output(amax_s, uid::amax_s);
        scalar_output(amax_o, uid::amax_o);
        o = o8;
        stats = stats8;
    } else {
        auto [o16, stats16] = g->sdpa(q, k, v, opts);
        o = o16;
        stats = stats16;
    }
    output(o, uid::o, qv);
    output(stats, uid::stats, sv);
    stats->set_data_type(fe::DataType_t::FLOAT);
    check_frontend(g->validate(), "validate (forward)");
    return g;
}

std::shared_ptr<fe::graph::Graph> build_sdpa_bwd_graph(const cudnn_sdpa_call& c) {
    auto g = new_graph(c.dtype);
    const auto qv = cudnn_q_view(c.shape, c.call), kv = cudnn_kv_view(c.shape, c.call);
    const auto sv = cudnn_stats_view(c.shape, c.call);
    const tensor q = input(*g, "Q", uid::q, qv), k = input(*g, "K", uid::k, kv);
    const tensor v = input(*g, "V", uid::v, kv), o = input(*g, "O", uid::o, qv);
    const tensor d_o = input(*g, "dO", uid::d_o, qv);
    const tensor stats = input(*g, "stats", uid::stats, sv);
    stats->set_data_type(fe::DataType_t::FLOAT);
    if (c.dtype == attn_dtype_kind::fp8)
        return fp8_bwd_graph(g, c, {q, k, v, o, d_o, stats});
    auto opts = fe::graph::SDPA_backward_attributes()
                    .set_name("sdpa_bwd")
                    .set_attn_scale(attention_scale(c.shape));
    set_band(opts, c.call.band);
    auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, opts);
    output(dq, uid::dq, qv);
    output(dk, uid::dk, kv);
    output(dv, uid::dv, kv);
    check_frontend(g->validate(), "validate (backward)");
    return g;
}

} // namespace ringscale::kernels::cuda
