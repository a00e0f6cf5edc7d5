// Job `context_parallel`: the all-gather, Ulysses and hybrid (Ulysses x ring) families of
// context parallelism on the same inputs, sizes and ranks as ring_attention, so a launch of
// both jobs compares all four schemes (the launcher closes with a table of them, ranked by
// the analysis code that `ringscale-stats crossover` uses).
#include "jobs/context_parallel.hpp"
#include "jobs/attention_case.hpp"

#include "kernels/mask_layout.hpp"

#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace ringscale::jobs {

std::string cp_scheme::name() const {
    if (variant != "hybrid")
        return variant;
    return fmt::format("hybrid/u{}{}", ulysses_degree,
                       placement == comm::group_placement::across ? "/across" : "");
}

namespace {

/// The hybrid's automatic degree (see read_cp_scheme).
int auto_ulysses_degree(const attention_problem& pr, const comm::node_layout& nodes, int ranks) {
    int u = 1;
    if (nodes.nodes() == 1) { // the largest divisor of P not above sqrt(P)
        for (int d = 1; d * d <= ranks; ++d)
            if (ranks % d == 0)
                u = d;
        return u;
    }
    auto fits = [&](int d) {
        for (int n = 0; n < nodes.nodes(); ++n)
            if (nodes.node_size(n) % d != 0)
                return false;
        return ranks % d == 0 && pr.heads % d == 0 && pr.kv_heads % d == 0 && pr.kv_heads >= d;
    };
    for (int d = 1; d <= nodes.ranks_per_node(); ++d)
        if (fits(d))
            u = d;
    return u;
}

} // namespace

cp_scheme read_cp_scheme(const params& p, const attention_problem& pr,
                         const comm::node_layout& nodes, int ranks) {
    cp_scheme s;
    s.variant = p.text("variant");
    if (p.has("ulysses-placement"))
        s.placement = comm::parse_group_placement(p.text("ulysses-placement"), "ulysses-placement");
    if (s.variant == "allgather")
        s.ulysses_degree = 1;
    else if (s.variant == "ulysses")
        s.ulysses_degree = ranks;
    else {
        const std::uint64_t u = p.size("ulysses-degree"); // at most 2^20, its declared range
        s.ulysses_degree =
            u == 0 ? auto_ulysses_degree(pr, nodes.for_world(ranks), ranks) : static_cast<int>(u);
    }
    return s;
}

std::string cp_placement_note(const cp_scheme& scheme, const comm::node_layout& nodes, int ranks) {
    const comm::node_layout l = nodes.for_world(ranks);
    const int u = scheme.ulysses_degree;
    if (scheme.variant != "hybrid" || scheme.placement != comm::group_placement::node ||
        l.nodes() == 1 || u <= 1 || ranks % u != 0 ||
        comm::groups_inside_nodes(l, cp_rank_order(scheme, l, ranks), u))
        return "";
    return fmt::format("context_parallel {}: some Ulysses groups span nodes ({}): their "
                       "all-to-all crosses the link between nodes",
                       scheme.name(), l.describe());
}

std::vector<int> cp_rank_order(const cp_scheme& scheme, const comm::node_layout& nodes, int ranks) {
    const int u = scheme.ulysses_degree;
    if (u <= 1 || u >= ranks) {
        std::vector<int> order(static_cast<std::size_t>(ranks));
        for (int r = 0; r < ranks; ++r)
            order[static_cast<std::size_t>(r)] = r;
        return order;
    }
    return comm::group_order(nodes.for_world(ranks), scheme.placement);
}

void check_cp_case(const cp_scheme& scheme, const attention_problem& pr,
                   const comm::node_layout& nodes, int ranks) {
    kernels::check_mask_layout(pr.layout, pr.seq_len, ranks, pr.mask.get());
    if (scheme.variant == "allgather")
        return;
    const int u = scheme.ulysses_degree;
    const comm::node_layout l = nodes.for_world(ranks);
    if (scheme.variant == "hybrid" && scheme.placement == comm::group_placement::node &&
        u > l.ranks_per_node())
        throw config_error(fmt::format("--ulysses-degree {} cannot fit a node: the largest holds "
                                       "{} ranks ({}; --ulysses-placement across spreads the "
                                       "groups over nodes)",
                                       u, l.ranks_per_node(), l.describe()));
    // Name the constraint the way the user set it: ulysses shards heads over all P ranks.
    const std::string degree =
        scheme.variant == "ulysses"
            ? fmt::format("the {} ranks (--variant ulysses shards heads over all ranks)", u)
            : fmt::format("--ulysses-degree {}", u);
    if (scheme.variant == "hybrid" && (u < 1 || ranks % u != 0))
        throw config_error(fmt::format("--ulysses-degree {} does not divide the {} ranks "
                                       "(--variant hybrid runs a ring of P/u Ulysses groups)",
                                       u, ranks));
    if (pr.heads % u != 0)
        throw config_error(fmt::format("--heads {} is not divisible by {}", pr.heads, degree));
    if (pr.kv_heads < u)
        throw config_error(fmt::format("--kv-heads {} is below {}: every rank of a Ulysses "
                                       "group needs a key/value head of its own",
                                       pr.kv_heads, degree));
    if (pr.kv_heads % u != 0)
        throw config_error(
            fmt::format("--kv-heads {} is not divisible by {}", pr.kv_heads, degree));
    // As --scope inter and --shift node: a placement across nodes on one node means nothing.
    if (scheme.variant == "hybrid" && scheme.placement == comm::group_placement::across &&
        l.nodes() == 1)
        throw config_error(fmt::format("--ulysses-placement across spreads each Ulysses group "
                                       "over nodes, but all {} ranks run on one node",
                                       ranks));
}

std::uint64_t cp_bytes_per_rank(const cp_scheme& scheme, const attention_problem& pr, int ranks,
                                bool validate) {
    const double rows = static_cast<double>(pr.seq_len) / ranks;
    const double q = pr.batch * pr.heads * rows * pr.head_dim;
    const double kv = 2.0 * pr.batch * pr.kv_heads * rows * pr.head_dim; // K and V
    const int bwd = pr.backward ? 1 : 0;
    double floats = 2 * q + kv + bwd * (2 * q + kv); // Q, O, K|V; dO, dQ, dK|dV
    if (scheme.variant == "allgather") {
        floats += ranks * kv + bwd * 3 * kv; // every rank's K|V; ring reduce-scatter buffers
    } else {
        const double ring = ranks / scheme.ulysses_degree > 1 ? 1 : 0;
        floats += 2 * q + kv + 2 * (q + 2 * kv);      // head-sharded Q, O, K|V; send/recv staging
        floats += ring * 2 * kv;                      // two ring buffers
        floats += bwd * (2 * q + kv + ring * 2 * kv); // head-sharded dO, dQ, dK|dV; ring dK|dV
    }
    const double valid = validate ? static_cast<double>(attention_validation_bytes(pr)) : 0;
    return bytes_from_estimate(floats * sizeof(float) + (8u << 20) + valid);
}

namespace {

class context_parallel_job final : public job {
  public:
    std::string name() const override { return "context_parallel"; }
    std::string summary() const override {
        return "context parallelism: all-gather K/V, Ulysses all-to-all, or hybrid Ulysses x ring";
    }
    std::vector<option_decl> options() const override {
        auto opts = attention_options();
        opts.push_back(
            option_decl::choice("variant", "allgather", {"allgather", "ulysses", "hybrid"})
                .sweeps()
                .help("allgather (all-gather K/V, Llama 3) | ulysses (all-to-all to "
                      "heads, DeepSpeed-Ulysses; heads and kv-heads divisible by P) | "
                      "hybrid (Ulysses in groups of --ulysses-degree ranks, ring "
                      "across groups)"));
        opts.push_back(option_decl::size("ulysses-degree", "0", 0, 1 << 20)
                           .sweeps()
                           .help("hybrid only: ranks per Ulysses group u; divides P, heads and "
                                 "kv-heads; ring degree P/u; 0 = on one node the largest "
                                 "divisor of P with u*u <= P, on several the ranks per node "
                                 "(as far as the heads allow)"));
        opts.push_back(option_decl::choice("ulysses-placement", "node", {"node", "across"})
                           .sweeps()
                           .help("hybrid only: each Ulysses group inside one node (node) or "
                                 "its ranks on different nodes (across; to measure the cost)"));
        return opts;
    }
    std::vector<case_plan> plan(const std::vector<params>& sweep,
                                const launch_info& launch) const override;
    std::unique_ptr<case_runner> make_case(const case_plan& plan, run_context& ctx) const override {
        const auto pr = read_attention_problem(plan.values);
        const int ranks = ctx.world.size();
        const cp_scheme scheme = read_cp_scheme(plan.values, pr, ctx.launch.nodes, ranks);
        schemes::cp_config c;
        c.variant = scheme.variant;
        c.ulysses_degree = scheme.ulysses_degree;
        c.order = cp_rank_order(scheme, ctx.launch.nodes, ranks);
        return make_attention_case(pr, c, ctx);
    }
    std::vector<metric> metrics(const case_plan& plan,
                                const results::case_record& rec) const override {
        std::vector<metric> out = {metric::of_text("scheme", plan.variant)};
        for (auto part : {attention_shape_metrics(plan), attention_rate_metrics(plan, rec)})
            out.insert(out.end(), part.begin(), part.end());
        double peak = 0;
        for (const std::uint64_t bytes : rec.peak_host_bytes)
            peak = std::max(peak, static_cast<double>(bytes));
        out.push_back(metric::of("sent/rank",
                                 rec.number(schema::attr::comm_bytes_per_iter)
                                     .value_or(std::numeric_limits<double>::quiet_NaN()),
                                 "", metric_hint::bytes));
        out.push_back(metric::of("peak/rank",
                                 peak > 0 ? peak : std::numeric_limits<double>::quiet_NaN(), "",
                                 metric_hint::bytes));
        return out;
    }
};

namespace {

/// --ulysses-degree and --ulysses-placement shape only the hybrid: refused when no case of the
/// sweep is one (otherwise they would label all-gather or Ulysses cases with a choice that
/// changed nothing), and set to their defaults in the identity of the other variants' cases.
void hybrid_options_only(const std::vector<params>& sweep, std::vector<case_plan>& cases) {
    bool hybrid = false, given = false;
    for (const params& p : sweep) {
        hybrid = hybrid || p.text("variant") == "hybrid";
        given = given || p.text("ulysses-degree") != "0" ||
                (p.has("ulysses-placement") && p.text("ulysses-placement") != "node");
    }
    if (given && !hybrid)
        throw config_error(fmt::format("--ulysses-degree and --ulysses-placement shape only "
                                       "--variant hybrid, and this launch runs {}",
                                       sweep.empty() ? "none" : sweep.front().text("variant")));
    for (case_plan& c : cases)
        if (c.values.text("variant") != "hybrid") {
            c.values.set("ulysses-degree", size_value(0));
            if (c.values.has("ulysses-placement"))
                c.values.set("ulysses-placement", text_value("node"));
        }
}

} // namespace

std::vector<case_plan> context_parallel_job::plan(const std::vector<params>& sweep,
                                                  const launch_info& launch) const {
    const comm::node_layout& nodes = launch.nodes;
    auto cases = plan_attention_cases(
        name(), sweep, launch, {"variant", "ulysses-degree", "ulysses-placement"},
        [&](const params& p, const attention_problem& pr, int ranks) {
            check_cp_case(read_cp_scheme(p, pr, nodes, ranks), pr, nodes, ranks);
        },
        [&](const params& p, const attention_problem& pr, int ranks, bool validate) {
            return cp_bytes_per_rank(read_cp_scheme(p, pr, nodes, ranks), pr, ranks, validate);
        },
        [&](const params& p) {
            return read_cp_scheme(p, read_attention_problem(p), nodes, launch.world_size).name();
        });
    // --ulysses-degree and --ulysses-placement only shape the hybrid, and 0 may resolve to a
    // degree also listed: a sweep over them must not repeat a case.
    std::set<std::string> seen;
    std::vector<case_plan> kept;
    for (auto& c : cases) {
        const bool hybrid = c.values.text("variant") == "hybrid";
        std::string key = c.variant;
        for (const auto& [k, v] : c.values.values())
            if (k != "ulysses-degree" && (hybrid || k != "ulysses-placement"))
                key += "|" + k + "=" + v.text;
        if (!seen.insert(key).second)
            continue;
        if (hybrid) {
            const auto pr = read_attention_problem(c.values);
            c.note = cp_placement_note(read_cp_scheme(c.values, pr, nodes, launch.world_size),
                                       nodes, launch.world_size);
        }
        kept.push_back(std::move(c));
    }
    hybrid_options_only(sweep, kept);
    return kept;
}

} // namespace

std::unique_ptr<job> make_context_parallel_job() {
    return std::make_unique<context_parallel_job>();
}

} // namespace ringscale::jobs
