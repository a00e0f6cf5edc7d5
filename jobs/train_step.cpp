// Job `train_step`: whole training steps of a small transformer (kernels/model/transformer) on a
// dp x cp grid. Positions i = d*cp + c of train_problem::grid_order: the cp ranks of replica d
// are consecutive there, by default the ranks of one node (they talk every layer). Replica d takes
// sequences [d*B, (d+1)*B) of the seeded global batch; cp rank c takes the zigzag positions of
// every one of them. Data parallelism: --dp-variant ddp | zero1 | fsdp
// (jobs/schemes/data_parallel.hpp); attention across cp ranks: --cp-variant ring | allgather |
// ulysses | hybrid (jobs/train_attention.hpp over jobs/schemes). Loss = sum over ranks of shard
// losses, each normalised by the global token count. validate() reruns --steps-validate steps from
// the initial parameters and compares with the single-rank reference run.
//
// The step computes through a training context on the launch's executor (train_context): the
// CPU kernels, or on --device cuda the CUDA kernels on the executor's compute stream with every
// parameter, gradient, AdamW state and activation in device memory and the data-parallel
// collectives on device buffers through ctx.world (NCCL or staged MPI). On CUDA the reference is
// the single-rank GPU run, recomputed by every rank on its own device.
#include "jobs/attention_common.hpp"
#include "jobs/train_attention.hpp"
#include "jobs/train_faults.hpp"
#include "jobs/train_lowp.hpp" // train_problem, share_current_amax
#include "jobs/train_numerics.hpp"
#include "jobs/train_validate.hpp"
#include "kernels/dev_mask.hpp"
#include "kernels/model/reference_train.hpp"
#include "src/base/error.hpp"
#include "src/base/memory.hpp"
#include "src/base/numerics_schema.hpp"
#include "src/base/results_schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace ringscale::jobs {

namespace {

namespace attr = schema::attr;

// A case's values as one line (name=text ...), to drop a repeat of an earlier case.
std::string case_text(const params& p) {
    std::string key;
    for (const auto& [name, v] : p.values())
        key += name + "=" + v.text + "|";
    return key;
}

class train_case final : public case_runner {
  public:
    // Splitting the world is collective: done here, where every rank constructs the case in
    // the same order and nothing before it can fail on one rank only.
    train_case(const train_problem& pr, run_context& ctx)
        : m_pr(pr), m_world(ctx.world), m_control(ctx.control), m_dev(ctx.dev),
          m_seed(ctx.seed + pr.data_seed), m_warmup(ctx.warmup), m_layout(pr.model),
          m_train(std::make_unique<kernels::model::train_context>(ctx.dev, pr.tf32)),
          m_at(comm::positions_of(
              pr.grid_order(ctx.launch.nodes))[static_cast<std::size_t>(ctx.world.rank())]) {
        if (pr.cp > 1)
            m_cp = ctx.world.split(m_at / pr.cp, m_at % pr.cp);
        m_cp_amax = share_current_amax(pr, ctx.control, m_at, m_train->precision_state());
        m_train->precision_state().configure(pr.precision, pr.model.layers);
        m_profile.set_device(ctx.dev.events()); // a GPU's profile: spans of its events
    }

    attr_map describe() const override {
        const double tokens = static_cast<double>(m_pr.global_tokens);
        attr_map a = {
            {attr::scaling, m_pr.scaling},
            {attr::dp, static_cast<std::int64_t>(m_pr.dp)},
            {attr::cp, static_cast<std::int64_t>(m_pr.cp)},
            {attr::sequences, m_pr.sequences},
            {attr::parameters, static_cast<std::int64_t>(m_layout.total())},
            {attr::tokens_per_iter, tokens},
            {attr::flops_per_iter, m_pr.flops_per_step()},
            {attr::flop_convention, std::string(flop_convention())},
            {attr::comm_bytes_per_iter, m_pr.comm_bytes_per_step()},
            {attr::cp_layout, std::string(m_pr.cp > 1 ? "zigzag" : "none")},
            {attr::tf32, static_cast<std::int64_t>(m_pr.tf32 ? 1 : 0)},
            {attr::precision, m_train->precision()},
            {attr::dtype, std::string(kernels::model::train_dtype_name(m_pr.precision.dtype))},
            {attr::mfu_dtype, m_train->gemm_dtype()},
            {attr::train_storage, m_train->storage()}};
        if (m_pr.precision.dtype != kernels::model::train_dtype::fp32)
            a[attr::train_precision] = m_pr.precision.describe() + ", emulated on the CPU kernels";
        add_masked_attn_kernel(a, m_pr.docs != nullptr, m_dev.kind());
        return a;
    }

    void setup() override {
        const int r = m_at; // replica r / cp, cp rank r % cp
        const std::int64_t nseq = m_pr.local_sequences();
        const auto pos =
            train_cp_positions(m_pr.seq_len, m_pr.cp)[static_cast<std::size_t>(r % m_pr.cp)];
        std::vector<std::int32_t> ids(static_cast<std::size_t>(nseq) * pos.size());
        std::vector<std::int32_t> targets(ids.size());
        kernels::model::fill_batch(m_seed, m_pr.model.vocab, (r / m_pr.cp) * nseq, nseq, pos,
                                   ids.data(), targets.data());
        if (active_faults().cp_label_shift && m_pr.cp > 1)
            plant_label_shift(r / m_pr.cp * nseq, pos, targets);
        m_ids = kernels::dev_buffer<std::int32_t>(m_dev, ids);
        m_targets = kernels::dev_buffer<std::int32_t>(m_dev, targets);
        m_init.resize(m_layout.total());
        kernels::model::init_params(m_pr.model, m_layout, m_seed, m_init.data());
        m_docs = kernels::dev_mask(m_dev, m_pr.docs); // the documents where kernels read them
        const kernels::batch_shape rows{nseq, m_pr.local_rows()};
        m_core = make_train_attention(
            m_pr.cp_variant, m_pr.cp_ulysses_degree, m_cp.get(), *m_train,
            kernels::model::transformer::attention_shape_of(m_pr.model, rows, m_docs.view()),
            m_pr.seq_len);
        m_model =
            std::make_unique<kernels::model::transformer>(m_pr.model, rows, *m_core, *m_train);
        m_model->set_attention_mask(m_docs.view());
        m_model->reserve();
        m_dp = schemes::make_dp_strategy(m_pr.dp_set, m_world, m_layout, *m_train);
        m_dp->load(m_init.data());
    }

    void iterate(phase_timer& timer) override {
        // --profile: rank 0 times the operations of the timed (non-warm-up) steps; on a GPU as
        // spans of its event recorder, resolved when the run loop finishes the iteration.
        const bool timed_step = m_iter++ >= m_warmup;
        const bool profiled = m_pr.profile && timed_step && m_world.rank() == 0;
        if (profiled)
            m_profile.attach_to_device();
        m_train->set_profile(profiled ? &m_profile : nullptr);
        const double start = now_s();
        m_losses.push_back(step(timer));
        m_train->set_profile(nullptr);
        if (profiled && !m_profile.device()) {
            m_profile.add(kernels::op_kind::communication, timer.comm_wait_s());
            m_profile.add_step(now_s() - start);
        }
    }

    validation validate() override {
        m_step_peak_device = m_dev.device_peak_bytes(); // before the reference's buffers
        const training_tolerance tol =
            training_tolerance::of(m_dev.kind() == device_kind::cpu, m_pr.precision.dtype);
        restart();
        if (m_pr.numerics_steps > 0) {
            phase_timer timer;
            numerics_driver d;
            d.step = [&] { return step(timer); };
            d.gather_grads = [&](float* g) { m_dp->gather_grads(g); };
            d.gather_params = [&](float* p) { m_dp->gather_params(p); };
            const std::vector<float> init(m_init.begin(), m_init.end());
            numerics_result r =
                run_numerics(m_pr, m_seed, init, m_dev, m_docs.view(), m_control, d);
            m_numerics = std::move(r.series);
            m_details.insert(r.attrs.begin(), r.attrs.end());
            return compare_training(r.got, r.want, m_pr.dp_set.hp.lr, tol, m_details);
        }
        training_trace want, got;
        want.params.assign(m_init.begin(), m_init.end());
        want.first_grads.resize(m_layout.total());
        // A context of its own: the reference starts fp8's amax history afresh, as the run does.
        kernels::model::train_context ref_ctx(m_dev, m_pr.tf32);
        ref_ctx.precision_state().configure(m_pr.precision, m_pr.model.layers);
        want.losses = kernels::model::reference_train(
            m_pr.model, m_seed, m_pr.sequences, m_pr.seq_len, m_pr.steps_validate, m_pr.dp_set.hp,
            want.params.data(), want.first_grads.data(), ref_ctx, m_docs.view(),
            m_pr.reference_micro_batch());
        phase_timer timer;
        got.first_grads.resize(m_layout.total());
        for (int s = 0; s < m_pr.steps_validate; ++s) {
            got.losses.push_back(step(timer));
            if (s == 0)
                m_dp->gather_grads(got.first_grads.data());
        }
        got.params.resize(m_layout.total());
        m_dp->gather_params(got.params.data());
        return compare_training(got, want, m_pr.dp_set.hp.lr, tol, m_details);
    }

    case_extras extras() const override {
        case_extras e;
        e.per_iteration[schema::ds_loss] = m_losses;
        e.numerics = m_numerics;
        if (m_pr.precision.dtype == kernels::model::train_dtype::fp16)
            e.attrs[attr::fp16_overflows] =
                static_cast<std::int64_t>(m_train->precision_state().overflows());
        const schemes::dp_memory m = m_dp->memory();
        e.per_rank[schema::ds_param_bytes] = m.param_bytes;
        e.per_rank[schema::ds_grad_bytes] = m.grad_bytes;
        e.per_rank[schema::ds_optimizer_bytes] = m.optimizer_bytes;
        e.per_rank[schema::ds_comm_buffer_bytes] = m.comm_buffer_bytes;
        // The device high-water mark of the timed steps alone (peak_device_bytes also counts
        // the validation's reference run, which on a GPU runs on the same device).
        e.per_rank[schema::ds_step_peak_device_bytes] = static_cast<double>(
            m_step_peak_device ? m_step_peak_device : m_dev.device_peak_bytes());
        const double t = static_cast<double>(m_pr.local_sequences() * m_pr.local_rows());
        e.per_rank[schema::ds_activation_bytes] =
            4.0 *
            (kernels::model::transformer::activation_floats(
                 m_pr.model, {m_pr.local_sequences(), m_pr.local_rows()}) +
             train_cp_floats(m_pr.cp_variant, m_pr.cp, m_pr.cp_ulysses_degree, t, m_pr.model));
        e.attrs.insert(m_details.begin(), m_details.end());
        if (m_pr.profile)
            add_profile_attrs(e.attrs);
        if (!m_losses.empty())
            e.attrs[attr::final_loss] = m_losses.back();
        e.attrs[attr::memory_convention] = std::string(
            "activation_bytes: saved activations, backward scratch and cp buffers; "
            "comm_buffer_bytes: reduce targets, send shards, FSDP gather/scratch buffers");
        return e;
    }

  private:
    // profile_<op>_s (seconds over the timed steps), profile_<op>_calls, profile_steps,
    // profile_step_s (total), profile_ops (order), from rank 0 (the file keeps rank 0's keys).
    void add_profile_attrs(attr_map& a) const {
        std::string order;
        for (std::size_t i = 0; i < kernels::op_kinds; ++i) {
            const auto k = static_cast<kernels::op_kind>(i);
            const std::string name = kernels::op_name(k);
            a[attr::profile_prefix + name + "_s"] = m_profile.seconds(k);
            a[attr::profile_prefix + name + "_calls"] = m_profile.calls(k);
            order += (i ? "," : "") + name;
        }
        a[attr::profile_ops] = order;
        a[attr::profile_steps] = m_profile.steps();
        a[attr::profile_step_s] = m_profile.step_s();
        a[attr::profile_rank] = std::int64_t{0};
        a[attr::profile_dropped] = static_cast<std::int64_t>(m_profile.dropped());
    }

    // Planted defect cp_label_shift: the last token of each of the rank's chunks takes the
    // label of the token after its own label (sequences first_seq.., positions `pos`).
    void plant_label_shift(std::int64_t first_seq, const std::vector<std::int64_t>& pos,
                           std::vector<std::int32_t>& targets) const {
        const std::size_t n = pos.size();
        for (std::size_t q = 0; q < targets.size() / n; ++q)
            for (std::size_t i = 0; i < n; ++i)
                if ((i + 1 == n || pos[i + 1] != pos[i] + 1) && pos[i] + 1 < m_pr.seq_len)
                    targets[q * n + i] = kernels::model::target_at(
                        m_seed, m_pr.model.vocab, first_seq + static_cast<std::int64_t>(q),
                        pos[i] + 1);
    }

    // The same steps again from the initial parameters: step numbers, AdamW state and fp8's
    // amax history start afresh (validation and the numerics mode). Not collective.
    void restart() {
        m_dp->load(m_init.data());
        m_step = 0;
        m_train->precision_state().configure(m_pr.precision, m_pr.model.layers);
    }

    // One training step; returns the global loss (collective over the world).
    double step(phase_timer& timer) {
        ++m_step;
        m_dp->begin_step(timer);
        // Planted defect local_loss: normalised by this rank's tokens, not the global batch's.
        const auto norm = static_cast<std::size_t>(active_faults().local_loss
                                                       ? m_pr.local_sequences() * m_pr.local_rows()
                                                       : m_pr.global_tokens);
        const double mine = m_model->forward(*m_dp, m_ids.data(), m_targets.data(), norm, timer);
        m_model->backward(*m_dp, timer);
        m_dp->finish_step(m_step, timer);
        double total = 0; // a host scalar: over the host-memory control communicator
        kernels::phase_scope wait(m_dev, timer, phase::comm_wait);
        m_control.allreduce(&mine, &total, 1, comm::dtype::f64, comm::reduce_op::sum);
        // Delayed fp8: the step's amaxes, the max over every rank, join the history.
        m_train->precision_state().end_step([this](float* amax, std::size_t n) {
            std::vector<float> mine_amax(amax, amax + n);
            m_control.allreduce(mine_amax.data(), amax, n, comm::dtype::f32, comm::reduce_op::max);
        });
        return total;
    }

    train_problem m_pr;
    comm::communicator& m_world;
    comm::communicator& m_control;
    kernels::executor& m_dev;
    std::uint64_t m_seed;
    int m_warmup;
    kernels::model::param_layout m_layout;
    std::unique_ptr<kernels::model::train_context> m_train;
    kernels::dev_mask m_docs;                            // --docs (no rule without it)
    int m_at;                                            // this rank's position in the grid order
    std::unique_ptr<comm::communicator> m_cp, m_cp_amax; // m_cp_amax: share_current_amax
    std::unique_ptr<kernels::model::attention_core> m_core;
    std::unique_ptr<kernels::model::transformer> m_model;
    std::unique_ptr<schemes::dp_strategy> m_dp;
    kernels::dev_buffer<std::int32_t> m_ids, m_targets;
    host_buffer<float> m_init;
    std::vector<double> m_losses;
    std::int64_t m_step = 0;
    std::int64_t m_iter = 0; // iterate() calls so far (warm-up first)
    kernels::op_profile m_profile;
    std::uint64_t m_step_peak_device = 0;
    attr_map m_details;
    std::map<std::string, std::vector<double>> m_numerics; // --numerics: the series
};

class train_step_job final : public job {
  public:
    std::string name() const override { return "train_step"; }
    std::string summary() const override {
        return "training steps of a small transformer: ddp/zero1/fsdp x ring/allgather/ulysses/"
               "hybrid context parallelism, checked against the single-rank run";
    }
    std::vector<option_decl> options() const override { return train_options(); }

    std::vector<case_plan> plan(const std::vector<params>& sweep,
                                const launch_info& launch) const override {
        std::vector<case_plan> cases;
        std::set<std::string> seen;
        for (const params& p : seeded(sweep)) {
            const train_problem pr = read_train_problem(p, launch.world_size);
            check_train_device(pr, launch.device, launch.gpu_cc_major, launch.gpu_cc_minor);
            // As --scope inter: a placement across nodes on one node means nothing.
            if (pr.cp_placement == comm::group_placement::across &&
                launch.nodes.for_world(launch.world_size).nodes() == 1)
                throw config_error(fmt::format("--cp-placement across spreads each replica's cp "
                                               "ranks over nodes, but all {} ranks run on one "
                                               "node",
                                               launch.world_size));
            const bool on_device = launch.device != device_kind::cpu;
            case_plan c;
            c.job = name();
            c.variant = pr.dp_set.variant +
                        (pr.dp_set.variant == "fsdp" && pr.dp_set.prefetch ? "+prefetch" : "");
            if (pr.cp > 1)
                c.variant +=
                    "/cp-" + pr.cp_variant +
                    (pr.cp_variant == "hybrid" ? fmt::format("/u{}", pr.cp_ulysses_degree) : "") +
                    (pr.cp_placement == comm::group_placement::across ? "/across" : "");
            // The user's --dp (0 = ranks / cp) stays in the plan: it is the case's identity at
            // every P; the resolved grid goes into the file as derived dp.
            c.values = p.only(train_case_options(pr));
            if (!seen.insert(case_text(c.values)).second)
                continue; // --cp-ulysses-degree swept where it shapes nothing
            // Validation reruns the whole global batch on one rank: on by default when that
            // costs at most ~10 GFLOP on the CPU, ~10 TFLOP on a GPU (a few seconds).
            c.validate_by_default =
                pr.reference_flops() <= (on_device ? 1e13 : 1e10) || pr.numerics_steps > 0;
            c.bytes_per_rank = on_device ? pr.device_bytes_per_rank(c.validate_by_default)
                                         : pr.bytes_per_rank(c.validate_by_default);
            c.note = pr.placement_note(launch.nodes);
            cases.push_back(std::move(c));
        }
        return cases;
    }

    // The sweep with --dtype resolved (auto: fp32) and each point repeated for --seeds K as
    // data-seed d, d+1, ..., d+K-1 (the seed is part of the case identity).
    static std::vector<params> seeded(const std::vector<params>& sweep) {
        std::vector<params> out;
        for (params p : sweep) {
            if (p.has("dtype"))
                p.set("dtype", text_value(kernels::model::train_dtype_name(
                                   kernels::model::parse_train_dtype(p.text("dtype")))));
            const std::int64_t k = p.has("seeds") ? p.integer("seeds") : 1;
            const std::uint64_t first = p.has("data-seed") ? p.size("data-seed") : 0;
            for (std::int64_t i = 0; i < k; ++i) {
                if (k > 1)
                    p.set("data-seed", size_value(first + static_cast<std::uint64_t>(i)));
                out.push_back(p);
            }
        }
        return out;
    }

    std::unique_ptr<case_runner> make_case(const case_plan& plan, run_context& ctx) const override {
        return std::make_unique<train_case>(read_train_problem(plan.values, ctx.world.size()), ctx);
    }

    std::vector<metric> metrics(const case_plan& plan,
                                const results::case_record& rec) const override {
        constexpr double none = std::numeric_limits<double>::quiet_NaN();
        const double t = rec.median_step_s();
        const double ranks = std::max(rec.world, 1);
        const double tokens = rec.number(attr::tokens_per_iter).value_or(none);
        const double flops = rec.number(attr::flops_per_iter).value_or(none);
        const bool checked = rec.number(attr::validated).value_or(0) != 0;
        // dp as run (derived), else the user's (0 = ranks / cp) before the case ran.
        const std::string grid =
            fmt::format("{:.0f}x{}", rec.number(attr::dp).value_or(0), plan.values.text("cp"));
        return {
            metric::of_text("variant", plan.variant),
            metric::of_text("dpxcp", grid),
            metric::of("tokens", tokens, "", metric_hint::size),
            metric::of("params", rec.number(attr::parameters).value_or(none) / 1e6, "M",
                       metric_hint::number),
            metric::of("", t > 0 ? tokens / t : none, "tok/s", metric_hint::rate),
            metric::of("", t > 0 ? flops / t / ranks / 1e9 : none, "GF/s/rank", metric_hint::rate),
            metric::of("loss", rec.number(attr::final_loss).value_or(none), "",
                       metric_hint::number),
            metric::of("max_err", checked ? rec.number(attr::max_abs_err).value_or(0) : none, "",
                       metric_hint::error)};
    }
};

} // namespace

std::unique_ptr<job> make_train_step_job() {
    return std::make_unique<train_step_job>();
}

} // namespace ringscale::jobs
