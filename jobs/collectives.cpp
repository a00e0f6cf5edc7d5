// Job `collectives`: nccl-tests-style bandwidth of allreduce, allgather, reduce-scatter,
// all-to-all, send/recv and broadcast on float32 data, out of place or in place, in the
// device's memory (host MPI on the CPU; NCCL or staged MPI on CUDA), every result checked
// exactly; over the whole world, within each node or across the nodes (--scope).
#include "jobs/collectives_ops.hpp"
#include "jobs/collectives_scope.hpp"
#include "jobs/schemes/device_exchange.hpp"
#include "kernels/dev_buffer.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/results_schema.hpp"
#include "src/engine/job.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace ringscale::jobs {

namespace {

// Host staging for fills and checks: device buffers are written and read in chunks of this
// many elements, so validating a 1 GiB buffer never holds a 1 GiB host copy.
constexpr std::size_t k_chunk = std::size_t{1} << 20;
constexpr float k_sentinel = -1e30f;
// In-place reductions feed their output back as the next input: every reduction multiplies
// the largest magnitude by at most the rank count. Restore the input (untimed) before it
// could pass this, far below float's 3.4e38, so no timed iteration sees inf or NaN.
constexpr double k_magnitude_limit = 1e30;
// The declared ranges: messages up to 1 PiB (the memory preflight refuses what does not fit),
// roots up to 2^20 ranks (the plan refuses a root this launch does not have).
constexpr double k_max_bytes = 1ull << 50;
constexpr double k_max_ranks = 1 << 20;

/// dst[k] = collective_value(rank, first + k) for k < n (rank < 0: the sentinel); dst is
/// `dev` memory.
void fill(kernels::executor& dev, float* dst, std::size_t first, std::size_t n, int rank) {
    std::vector<float> host(std::min(n, k_chunk));
    for (std::size_t done = 0; done < n; done += host.size()) {
        const std::size_t m = std::min(host.size(), n - done);
        for (std::size_t k = 0; k < m; ++k)
            host[k] = rank < 0 ? k_sentinel : collective_value(rank, first + done + k);
        dev.upload(dst + done, host.data(), m * sizeof(float));
    }
}

bool reduces(const collective_op& op) {
    for (const char* name : {"allreduce", "reduce_scatter", "iallreduce", "ireduce_scatter"})
        if (op.name == name)
            return true;
    return false;
}

class collectives_case final : public case_runner {
  public:
    // Splitting by scope is collective: every rank builds the case in the same order.
    collectives_case(const collective_op& op, std::uint64_t bytes, const collective_peers& peers,
                     bool inplace, const collective_scope& scope, run_context& ctx)
        : m_op(op), m_peers(peers), m_inplace(inplace), m_scope(scope),
          m_sub(split_scope(ctx.world, ctx.launch.nodes, scope, m_active)),
          m_comm(m_sub ? *m_sub : ctx.world), m_dev(ctx.dev), m_sz(op.sizes(bytes, m_comm.size())) {
    }

    attr_map describe() const override {
        const int p = m_comm.size();
        namespace attr = schema::attr;
        return {{attr::bytes, static_cast<std::int64_t>(m_sz.bytes)},
                {attr::count, static_cast<std::int64_t>(m_sz.count)},
                {attr::busbw_factor, m_op.busbw_factor(p)},
                {attr::comm_bytes_per_iter, static_cast<double>(m_sz.bytes) * m_op.busbw_factor(p)},
                {attr::flops_per_iter, 0.0},
                {attr::scope_ranks, static_cast<std::int64_t>(m_scope.ranks)},
                {attr::scope_groups, static_cast<std::int64_t>(m_scope.groups)},
                {"root", static_cast<std::int64_t>(m_peers.root)}};
    }

    void setup() override {
        if (!m_active) // --scope inter: this rank's node talks through its first rank
            return;
        if (m_inplace) {
            m_buf.allocate(m_dev, m_sz.inplace_count);
            load_inputs();
            return;
        }
        m_send.allocate(m_dev, m_sz.send_count);
        m_recv.allocate(m_dev, m_sz.recv_count);
        fill(m_dev, m_send.data(), 0, m_sz.send_count, m_comm.rank());
        m_dev.zero(m_recv.data(), m_recv.bytes());
    }

    void before_iteration() override {
        if (m_active && m_inplace && m_magnitude * m_comm.size() > k_magnitude_limit)
            load_inputs();
    }

    void iterate(phase_timer& timer) override {
        if (!m_active)
            return;
        // The inputs were written on the compute stream: order the communication after them.
        schemes::order_comm_after(m_comm, m_dev, m_dev.record());
        // The whole operation is communication; on CUDA timed by events on the compute stream.
        kernels::phase_scope wait(m_dev, timer, phase::comm_wait);
        run_once();
        if (m_inplace && reduces(m_op))
            m_magnitude *= m_comm.size();
    }

    validation validate() override {
        validation v;
        v.checked = true;
        if (!m_active)
            return v; // nothing received: nothing to check
        // Fresh inputs (in place, the timed iterations consumed them) and a sentinel in every
        // output element, so a stale buffer from an earlier iteration can never pass.
        if (m_inplace)
            load_inputs();
        else
            fill(m_dev, m_recv.data(), 0, m_recv.size(), -1);
        schemes::order_comm_after(m_comm, m_dev, m_dev.record());
        run_once();
        v.wrong = count_wrong();
        v.ok = v.wrong == 0;
        v.tolerance = 0;
        if (!v.ok)
            v.detail = fmt::format("{} wrong elements", v.wrong);
        return v;
    }

  private:
    void run_once() {
        const int me = m_comm.rank();
        if (m_inplace)
            m_op.run(m_comm, m_buf.data() + in_place_input_offset(m_sz, me),
                     m_buf.data() + in_place_output_offset(m_sz, me), m_sz, m_peers);
        else
            m_op.run(m_comm, m_send.data(), m_recv.data(), m_sz, m_peers);
    }

    /// In place: the rank's input in its place, the sentinel everywhere else.
    void load_inputs() {
        const int me = m_comm.rank();
        const std::size_t at = in_place_input_offset(m_sz, me);
        const std::size_t n = has_input(m_op, me, m_peers.root) ? m_sz.send_count : 0;
        fill(m_dev, m_buf.data(), 0, at, -1);
        fill(m_dev, m_buf.data() + at, 0, n, me);
        fill(m_dev, m_buf.data() + at + n, 0, m_buf.size() - at - n, -1);
        m_magnitude = 50; // collective_value's largest magnitude
    }

    /// Wrong elements of this rank's output, read back in chunks.
    std::uint64_t count_wrong() const {
        const int me = m_comm.rank();
        const float* out =
            m_inplace ? m_buf.data() + in_place_output_offset(m_sz, me) : m_recv.data();
        std::vector<float> host(std::min(m_sz.recv_count, k_chunk));
        std::uint64_t wrong = 0;
        for (std::size_t first = 0; first < m_sz.recv_count; first += host.size()) {
            const std::size_t n = std::min(host.size(), m_sz.recv_count - first);
            m_dev.download(host.data(), out + first, n * sizeof(float));
            wrong += m_op.count_wrong(me, m_comm.size(), host.data(), first, n, m_sz, m_peers);
        }
        return wrong;
    }

    const collective_op& m_op;
    collective_peers m_peers;
    bool m_inplace;
    collective_scope m_scope;
    bool m_active = true; // set by split_scope (declared before m_sub, initialised first)
    std::unique_ptr<comm::communicator> m_sub; // intra, inter: the scope's communicator
    comm::communicator& m_comm;
    kernels::executor& m_dev;
    collective_sizes m_sz;
    kernels::dev_buffer<float> m_send, m_recv; // out of place
    kernels::dev_buffer<float> m_buf;          // in place
    double m_magnitude = 50;                   // bound on |element| of the in-place buffer
};

/// Why `op` cannot run in place on this launch's communicator; "" when it can.
std::string in_place_refusal(const collective_op& op, const launch_info& launch) {
    if (op.no_in_place)
        return op.no_in_place;
    if (op.name == "alltoall" && launch.comm == comm_kind::nccl)
        return "NCCL has no in-place all-to-all (grouped sends and receives on one buffer "
               "would race)";
    return "";
}

/// One planned case of `bytes` requested, in place or not: skipped, with the reason, when the
/// message is below one float32 per rank or the operation has no in-place form here.
case_plan plan_case(const collective_op& op, std::uint64_t bytes, const collective_peers& peers,
                    bool inplace, const collective_scope& scope, const launch_info& launch) {
    case_plan c;
    c.job = "collectives";
    c.variant = op.name;
    c.values.set("op", text_value(op.name));
    c.values.set("root", integer_value(peers.root));
    if (op.name == "sendrecv" && peers.shift != 1) { // the default stays out: older files match
        c.values.set("shift", integer_value(peers.shift));
        c.variant += fmt::format("/shift{}", peers.shift);
    }
    c.values.set("requested_bytes", size_value(bytes));
    c.values.set("inplace", flag_value(inplace));
    c.values.set("scope", text_value(scope.name));
    const collective_sizes sz = op.sizes(bytes, scope.ranks);
    // The device's memory (tracked host memory on the CPU): one buffer in place, two out of it.
    c.bytes_per_rank = (inplace ? sz.inplace_count : sz.send_count + sz.recv_count) * sizeof(float);
    const std::string refusal = inplace ? in_place_refusal(op, launch) : "";
    if (sz.count == 0) {
        c.skippable = true;
        c.skip_reason = "message smaller than one float32 per rank";
    } else if (!refusal.empty()) {
        c.skippable = true;
        c.skip_reason = refusal;
    }
    return c;
}

class collectives_job final : public job {
  public:
    std::string name() const override { return "collectives"; }
    std::string summary() const override {
        return "bandwidth of MPI/NCCL collectives, busbw as in nccl-tests, results checked";
    }
    std::vector<option_decl> options() const override {
        std::vector<std::string> ops;
        for (const collective_op& op : all_ops())
            ops.push_back(op.name);
        ops.push_back("all");
        return {option_decl::choice("op", "all", ops)
                    .sweeps()
                    .help("operations; all = the six blocking ones (the "
                          "i-forms are nonblocking: posted, then waited for)"),
                option_decl::size("min-bytes", "1K", 1, k_max_bytes)
                    .short_option('b')
                    .help("smallest message in bytes"),
                option_decl::size("max-bytes", "16M", 1, k_max_bytes)
                    .short_option('e')
                    .help("largest message in bytes"),
                option_decl::integer("step-factor", "4", 2, 1024)
                    .short_option('f')
                    .help("multiply the size by this between cases"),
                option_decl::integer("root", "0", 0, k_max_ranks).help("root rank of broadcast"),
                option_decl::text("shift", "1")
                    .help("sendrecv: each rank sends to rank + SHIFT, receives from rank - SHIFT; "
                          "1 = a ring (as nccl-tests), node = the ranks per node: every rank "
                          "sends to the next node at once, as a hybrid's ring across nodes does"),
                option_decl::flag("inplace", "0")
                    .sweeps()
                    .help("0 out of place, 1 in place (one buffer; 0,1 runs both, as nccl-tests)"),
                option_decl::choice("scope", "world", {"world", "intra", "inter"})
                    .sweeps()
                    .help("ranks taking part: world (all) | intra (within each node, the nodes "
                          "side by side) | inter (one rank per node; the link between nodes)")};
    }

    std::vector<case_plan> plan(const std::vector<params>& sweep,
                                const launch_info& launch) const override;

    std::unique_ptr<case_runner> make_case(const case_plan& plan, run_context& ctx) const override {
        const collective_op& op = find_op(plan.values.text("op"));
        const collective_scope scope =
            plan_scope(plan.values.text("scope"), ctx.launch.nodes, ctx.world.size());
        collective_peers peers;
        peers.root = static_cast<int>(plan.values.integer("root"));
        if (plan.values.has("shift"))
            peers.shift = static_cast<int>(plan.values.integer("shift"));
        return std::make_unique<collectives_case>(
            op, plan.values.size("requested_bytes"), peers,
            plan.values.has("inplace") && plan.values.flag("inplace"), scope, ctx);
    }

    std::vector<metric> metrics(const case_plan& plan,
                                const results::case_record& rec) const override {
        namespace attr = schema::attr;
        constexpr double none = std::numeric_limits<double>::quiet_NaN();
        const double t = rec.median_step_s();
        const double bytes = rec.number(attr::bytes).value_or(none);
        // One rank moves nothing: a rate would be a copy or nothing at all (a no-op).
        const double algbw = t > 0 && rec.world > 1 ? bytes / t / 1e9 : none;
        const bool checked = rec.number(attr::validated).value_or(0) != 0;
        return {
            metric::of_text("op", plan.variant),
            metric::of_text("scope", plan.values.text("scope")),
            metric::of("size", bytes, "B", metric_hint::count),
            metric::of("count", rec.number(attr::count).value_or(none), "", metric_hint::count),
            metric::of_text("placement", plan.values.flag("inplace") ? "in-place" : "out-of-place"),
            metric::of("algbw", algbw, "GB/s", metric_hint::rate),
            metric::of("busbw", algbw * rec.number(attr::busbw_factor).value_or(none), "GB/s",
                       metric_hint::rate),
            metric::of("#wrong", checked ? rec.number(attr::wrong_elements).value_or(0) : none, "",
                       metric_hint::count)};
    }
};

std::vector<case_plan> collectives_job::plan(const std::vector<params>& sweep,
                                             const launch_info& launch) const {
    const params& first = sweep.front(); // min-bytes, max-bytes, step-factor, root, shift: one
    const std::uint64_t lo = first.size("min-bytes"), hi = first.size("max-bytes");
    const auto f = static_cast<std::uint64_t>(first.integer("step-factor"));
    const std::int64_t root = first.integer("root");
    if (lo > hi)
        throw config_error(fmt::format("--min-bytes ({}) is above --max-bytes ({})",
                                       format_size(lo), format_size(hi)));
    if (root >= launch.world_size)
        throw config_error(fmt::format("--root: {} is not a rank of this {}-rank launch", root,
                                       launch.world_size));
    std::vector<collective_scope> scopes; // each --scope value, checked on this launch's nodes
    std::vector<int> shifts;              // ... and the sendrecv shift on it
    bool sendrecv = false;
    for (const params& p : sweep) {
        const collective_scope s = plan_scope(p.text("scope"), launch.nodes, launch.world_size);
        if (root >= s.ranks)
            throw config_error(fmt::format("--root: {} is not a rank of the {}-rank --scope {} "
                                           "communicator",
                                           root, s.ranks, s.name));
        scopes.push_back(s);
        for (const collective_op* op : ops_from_list({p.text("op")}))
            sendrecv = sendrecv || op->name == "sendrecv";
    }
    if (!sendrecv && first.text("shift") != "1")
        throw config_error("--shift is sendrecv's peer distance, but --op runs no sendrecv");
    for (const collective_scope& s : scopes)
        shifts.push_back(
            sendrecv ? plan_shift(first.text("shift"), launch.nodes, launch.world_size, s) : 1);
    std::vector<case_plan> cases;
    std::string refused; // an in-place refusal, reported if nothing else would run
    // The points come op by op (op varies slowest), each op with every --inplace value: all
    // sizes of an op, each size in every placement side by side.
    for (std::size_t i = 0, j = 0; i < sweep.size(); i = j) {
        while (j < sweep.size() && sweep[j].text("op") == sweep[i].text("op"))
            ++j;
        for (const collective_op* op : ops_from_list({sweep[i].text("op")}))
            for (std::uint64_t bytes = lo; bytes <= hi; bytes *= f) {
                for (std::size_t k = i; k < j; ++k) {
                    const bool inplace = sweep[k].flag("inplace");
                    const collective_peers peers{static_cast<int>(root), shifts[k]};
                    cases.push_back(plan_case(*op, bytes, peers, inplace, scopes[k], launch));
                    if (inplace && !in_place_refusal(*op, launch).empty())
                        refused = in_place_refusal(*op, launch);
                }
                if (bytes > hi / f)
                    break;
            }
    }
    const bool none_runs = std::all_of(cases.begin(), cases.end(),
                                       [](const case_plan& c) { return !c.skip_reason.empty(); });
    if (none_runs && !refused.empty())
        throw config_error(fmt::format("--inplace 1: {}; use --inplace 0", refused));
    return cases;
}

} // namespace

std::unique_ptr<job> make_collectives_job() {
    return std::make_unique<collectives_job>();
}

} // namespace ringscale::jobs
