// The attention jobs' masks (jobs/attention_common.hpp): the mask options, reading them into
// a kernels::mask_spec, sharding a masked sequence and the work each rank gets.
#include "jobs/attention_common.hpp"

#include "kernels/mask_count.hpp"
#include "kernels/mask_layout.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <limits>

namespace ringscale::jobs {

std::vector<option_decl> mask_options() {
    return {
        option_decl::size("window", "", 1, double(1ull << 30))
            .sweeps()
            .help("sliding window W: each query sees the W keys up to it (causal) or within W-1 "
                  "of it"),
        option_decl::text("docs", "")
            .sweeps()
            .help("documents packed into the sequence, attention only within one: fixed:L | "
                  "uniform:LO-HI (seeded lengths) | L1+L2+... (summing to S)"),
        option_decl::number("sparsity", "", 0, 1)
            .sweeps()
            .help("block-sparse: the fraction F in [0, 1) of (query block, key block) pairs "
                  "masked"),
        option_decl::choice("sparse-pattern", "random", {"random", "local_global"})
            .sweeps()
            .help("with --sparsity: random (seeded by the mask) | local_global (a band and the "
                  "first block, Longformer/BigBird)"),
        option_decl::size("sparse-block", "128", 1, 1 << 20)
            .sweeps()
            .help("with --sparsity: block size in tokens"),
        option_decl::text("dilation", "")
            .sweeps()
            .help("LongNet dilated attention: SEGMENT:RATE[+SEGMENT:RATE...], each rate "
                  "dividing its segment")};
}

kernels::mask_spec read_mask_spec(const params& p) {
    kernels::mask_spec m;
    if (p.has("window"))
        m.window = static_cast<std::int64_t>(p.size("window"));
    if (p.has("docs"))
        m.docs = p.text("docs");
    if (p.has("sparsity")) {
        m.sparsity = p.number("sparsity");
        if (p.has("sparse-pattern"))
            m.pattern = p.text("sparse-pattern");
        if (p.has("sparse-block"))
            m.block = static_cast<std::int64_t>(p.size("sparse-block"));
    }
    if (p.has("dilation"))
        m.dilation = p.text("dilation");
    return m;
}

double work_imbalance(const std::vector<std::int64_t>& pairs) {
    double total = 0, most = 0;
    for (const std::int64_t n : pairs) {
        total += static_cast<double>(n);
        most = std::max(most, static_cast<double>(n));
    }
    if (total <= 0)
        return std::numeric_limits<double>::quiet_NaN();
    return most / (total / static_cast<double>(pairs.size()));
}

std::vector<std::int64_t> pairs_per_rank(const attention_problem& pr,
                                         const std::vector<std::vector<std::int64_t>>& positions) {
    const std::vector<std::int64_t> all = kernels::all_positions(pr.seq_len);
    std::vector<std::int64_t> out;
    for (const auto& mine : positions)
        out.push_back(kernels::count_visible(pr.mask_view(), pr.causal, mine, all));
    return out;
}

std::vector<std::vector<std::int64_t>> attention_positions(const attention_problem& pr, int ranks) {
    return kernels::mask_layout_positions(pr.layout, pr.seq_len, ranks, pr.causal, pr.mask.get());
}

attr_map attention_attrs(const attention_problem& pr,
                         const std::vector<std::vector<std::int64_t>>& positions) {
    attr_map a = attention_attrs(pr);
    a[schema::attr::work_imbalance] = work_imbalance(pairs_per_rank(pr, positions));
    return a;
}

} // namespace ringscale::jobs
