#include "jobs/train_lowp.hpp"

#include "comm/communicator.hpp"
#include "kernels/lowp_gemm.hpp"
#include "kernels/model/mixed_precision.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <utility>

namespace ringscale::jobs {

std::string lowp_gpu_refusal(const train_problem& pr, int cc_major, int cc_minor) {
    using kernels::model::train_dtype;
    const train_dtype t = pr.precision.dtype;
    if (t == train_dtype::fp32)
        return "";
    const kernels::lowp_type lt = t == train_dtype::bf16   ? kernels::lowp_type::bf16
                                  : t == train_dtype::fp16 ? kernels::lowp_type::f16
                                                           : kernels::lowp_type::fp8;
    if (cc_major > 0)
        if (std::string why = kernels::lowp_device_refusal(lt, cc_major, cc_minor); !why.empty())
            return why;
    if (lt != kernels::lowp_type::fp8)
        return "";
    const auto& m = pr.model;
    const auto rows = static_cast<std::size_t>(pr.local_rows());
    const auto h = static_cast<std::size_t>(m.hidden);
    const std::pair<const char*, kernels::linear_shape> gemms[] = {
        {"QKV", {rows, h, static_cast<std::size_t>(m.qkv_width())}},
        {"MLP up", {rows, h, static_cast<std::size_t>(m.ffn_up())}},
        {"MLP down", {rows, static_cast<std::size_t>(m.ffn_width()), h}},
        {"logits", {rows, h, static_cast<std::size_t>(m.vocab)}}};
    for (const auto& [name, s] : gemms)
        if (std::string why = kernels::lowp_shape_refusal(lt, s); !why.empty())
            return fmt::format("--dtype fp8 on the GPU: the {} GEMM ({} rows, {} -> {}): {}; "
                               "hidden, K/V width, FFN width, vocab and seq_len / cp must be "
                               "multiples of 16",
                               name, s.tokens, s.in, s.out, why);
    return "";
}

double lowp_scratch_bytes(const kernels::model::model_config& m, kernels::model::train_dtype t,
                          double tokens) {
    if (t == kernels::model::train_dtype::fp32)
        return 0;
    const double h = static_cast<double>(m.hidden), v = static_cast<double>(m.vocab);
    const double f = static_cast<double>(m.ffn_width()), up = static_cast<double>(m.ffn_up());
    const double in_out[][2] = {
        {h, static_cast<double>(m.qkv_width())}, {h, h}, {h, up}, {f, h}, {h, v}};
    double a = 0, b = 0;
    for (const auto& g : in_out) {
        a = std::max(a, tokens * std::max(g[0], g[1]));        // x (forward) or dy
        b = std::max(b, std::max(g[0] * g[1], tokens * g[0])); // W or x (dW)
    }
    const double elem = t == kernels::model::train_dtype::fp8 ? 1 : 2;
    const double rounded_dy = 4.0 * tokens * std::max({h, up, v}); // layers with a bias
    return elem * (a + b) + rounded_dy + (32u << 20);              // cuBLASLt workspace
}

std::unique_ptr<comm::communicator> share_current_amax(const train_problem& pr,
                                                       comm::communicator& control, int at,
                                                       kernels::model::mixed_precision& mp) {
    if (pr.cp <= 1 || pr.precision.dtype != kernels::model::train_dtype::fp8 ||
        pr.precision.scaling != kernels::model::fp8_scaling::current)
        return nullptr;
    std::unique_ptr<comm::communicator> group = control.split(at / pr.cp, at % pr.cp);
    mp.set_amax_reduce([g = group.get()](float amax) {
        float all = 0;
        g->allreduce(&amax, &all, 1, comm::dtype::f32, comm::reduce_op::max);
        return all;
    });
    return group;
}

} // namespace ringscale::jobs
