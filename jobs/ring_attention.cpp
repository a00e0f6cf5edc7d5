// Job `ring_attention`: the whole sequence sharded over all ranks by --layout, attention by
// the ring (jobs/schemes/ring.hpp): K/V blocks rotate in P-1 steps and merge by log-sum-exp; with
// --overlap on the next block's exchange is posted before the current block is computed.
#include "jobs/attention_case.hpp"
#include "kernels/mask_layout.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"

namespace ringscale::jobs {

namespace {

class ring_attention_job final : public job {
  public:
    std::string name() const override { return "ring_attention"; }
    std::string summary() const override {
        return "ring attention: K/V blocks rotate around the ranks, merged by log-sum-exp";
    }
    std::vector<option_decl> options() const override {
        auto opts = attention_options();
        opts.push_back(
            option_decl::flag("overlap", "on")
                .sweeps()
                .help("post the next block's exchange before computing the current one"));
        return opts;
    }
    std::vector<case_plan> plan(const std::vector<params>& sweep,
                                const launch_info& launch) const override {
        return plan_attention_cases(
            name(), sweep, launch, {"overlap"},
            [](const params&, const attention_problem& pr, int ranks) {
                kernels::check_mask_layout(pr.layout, pr.seq_len, ranks, pr.mask.get());
            },
            memory_estimate, [](const params& p) { return "ring/" + p.text("layout"); });
    }
    std::unique_ptr<case_runner> make_case(const case_plan& plan, run_context& ctx) const override {
        schemes::cp_config ring;
        ring.overlap = plan.values.flag("overlap");
        return make_attention_case(read_attention_problem(plan.values), ring, ctx);
    }
    std::vector<metric> metrics(const case_plan& plan,
                                const results::case_record& rec) const override {
        std::vector<metric> out = attention_shape_metrics(plan);
        out.push_back(metric::of_text("overlap", plan.values.flag("overlap") ? "on" : "off"));
        const auto rates = attention_rate_metrics(plan, rec);
        out.insert(out.end(), rates.begin(), rates.end());
        return out;
    }

  private:
    static std::uint64_t memory_estimate(const params&, const attention_problem& pr, int ranks,
                                         bool validate) {
        const double rows = static_cast<double>(pr.seq_len) / ranks;
        const double q = pr.batch * pr.heads * rows * pr.head_dim;
        const double kv = pr.batch * pr.kv_heads * rows * pr.head_dim;
        const double e = static_cast<double>(kernels::elem_bytes(pr.type)), f = sizeof(float);
        double bytes = e * (q + 3 * 2 * kv) + f * (q + q / pr.head_dim); // Q, own K|V, 2 ring
        if (pr.backward) // dO; dQ, dK|dV local, send and own, delta
            bytes += e * q + f * (q + 3 * 2 * kv + q / pr.head_dim);
        if (validate) // gathered global tensors plus one reference group
            bytes +=
                f * (pr.backward ? 4.0 : 1.0) * pr.batch * pr.heads * pr.seq_len * pr.head_dim * 2;
        return bytes_from_estimate(bytes + (8u << 20));
    }
};

} // namespace

std::unique_ptr<job> make_ring_attention_job() {
    return std::make_unique<ring_attention_job>();
}

} // namespace ringscale::jobs
