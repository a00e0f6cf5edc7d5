// The launcher tests' attention case: a case of one attention scheme at P=2, S=1K whose
// identity, flops and bytes per iteration are those of a real launch, for the closing table
// and the decision rule to group, rank and compare.
#pragma once

#include "src/base/case_record.hpp"

#include <cstdint>
#include <string>

namespace ringscale::testing_support {

/// A case of `job` (ring_attention, or context_parallel's all-gather and Ulysses variants)
/// named `variant`, at P=2, S=1K, B=1, 8 heads of 64, causal, forward, fp32 on the CPU; its
/// outcome and timings are the caller's to set.
inline results::case_record attention_case_p2(const std::string& job, const std::string& variant) {
    results::case_record r;
    r.identity = {{"job", job},
                  {"variant", variant},
                  {"world_size", std::int64_t{2}},
                  {"seq_len", std::int64_t{1024}},
                  {"batch", std::int64_t{1}},
                  {"heads", std::int64_t{8}},
                  {"kv_heads", std::int64_t{8}},
                  {"head_dim", std::int64_t{64}},
                  {"causal", std::int64_t{1}},
                  {"pass", std::string("fwd")},
                  {"layout", std::string("zigzag")},
                  {"dtype", std::string("fp32")},
                  {"device", std::string("cpu")}};
    if (job == "ring_attention")
        r.identity["overlap"] = std::string("on");
    else
        r.identity["ulysses_degree"] = std::int64_t{0};
    r.derived = {{"flops_per_iter", 1e9}, {"comm_bytes_per_iter", 2048.0}};
    r.world = 2;
    return r;
}

} // namespace ringscale::testing_support
