// The collectives job at np=1, 2, 4 on the CPU through the run loop: every operation out of
// place and in place, validated exactly; in-place memory is one buffer; timed in-place
// reductions, which feed their output back as input, never reach inf or NaN.
#include "comm/communicator.hpp"
#include "jobs/registry.hpp"
#include "kernels/executor.hpp"
#include "src/engine/run_loop.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace ringscale;

namespace {

launch_config config(const std::string& op, const std::string& lo, const std::string& hi) {
    launch_config cfg;
    cfg.jobs = {"collectives"};
    cfg.params = {{"op", {op}},        {"min-bytes", {lo}},
                  {"max-bytes", {hi}}, {"step-factor", {"32"}},
                  {"root", {"0"}},     {"inplace", {"0", "1"}}};
    cfg.warmup = 1;
    cfg.iters = 3;
    cfg.validate = validate_mode::on;
    return cfg;
}

std::vector<scheduled_case> plan(const launch_config& cfg, int ranks) {
    jobs::launch_info launch;
    launch.world_size = ranks;
    launch.host_bytes_per_rank = 1ull << 30;
    return plan_launch(cfg, launch);
}

std::string text(const case_record& rec, const char* key) {
    return std::get<std::string>(rec.flat().at(key));
}

/// Forwards to host MPI and counts reductions whose input or output holds a non-finite float.
class finite_watch final : public comm::communicator {
  public:
    explicit finite_watch(comm::communicator& inner) : m_inner(inner) {}
    int non_finite = 0, reductions = 0;

    int rank() const override { return m_inner.rank(); }
    int size() const override { return m_inner.size(); }
    comm_kind backend() const override { return m_inner.backend(); }
    comm::memory_space memory() const override { return m_inner.memory(); }
    void barrier() override { m_inner.barrier(); }
    void allreduce(const void* s, void* r, std::size_t n, comm::dtype t,
                   comm::reduce_op op) override {
        watch(s, n, t);
        m_inner.allreduce(s, r, n, t, op);
        watch(r, n, t);
    }
    comm::request_ptr iallreduce(const void* s, void* r, std::size_t n, comm::dtype t,
                                 comm::reduce_op op) override {
        return m_inner.iallreduce(s, r, n, t, op);
    }
    void all_gather(const void* s, void* r, std::size_t n, comm::dtype t) override {
        m_inner.all_gather(s, r, n, t);
    }
    comm::request_ptr iall_gather(const void* s, void* r, std::size_t n, comm::dtype t) override {
        return m_inner.iall_gather(s, r, n, t);
    }
    void reduce_scatter(const void* s, void* r, std::size_t n, comm::dtype t,
                        comm::reduce_op op) override {
        watch(s, n * static_cast<std::size_t>(size()), t);
        m_inner.reduce_scatter(s, r, n, t, op);
        watch(r, n, t);
    }
    comm::request_ptr ireduce_scatter(const void* s, void* r, std::size_t n, comm::dtype t,
                                      comm::reduce_op op) override {
        return m_inner.ireduce_scatter(s, r, n, t, op);
    }
    void all_to_all(const void* s, void* r, std::size_t n, comm::dtype t) override {
        m_inner.all_to_all(s, r, n, t);
    }
    void broadcast(void* b, std::size_t n, comm::dtype t, int root) override {
        m_inner.broadcast(b, n, t, root);
    }
    comm::request_ptr isend(const void* b, std::size_t n, comm::dtype t, int peer,
                            int tag) override {
        return m_inner.isend(b, n, t, peer, tag);
    }
    comm::request_ptr irecv(void* b, std::size_t n, comm::dtype t, int peer, int tag) override {
        return m_inner.irecv(b, n, t, peer, tag);
    }
    comm::request_ptr isendrecv(const void* s, std::size_t sn, int dest, void* r, std::size_t rn,
                                int source, comm::dtype t, int tag) override {
        return m_inner.isendrecv(s, sn, dest, r, rn, source, t, tag);
    }
    std::unique_ptr<comm::communicator> split(int color, int key) override {
        return m_inner.split(color, key);
    }

  private:
    void watch(const void* p, std::size_t n, comm::dtype t) {
        if (t != comm::dtype::f32)
            return;
        ++reductions;
        const auto* f = static_cast<const float*>(p);
        for (std::size_t i = 0; i < n; ++i)
            non_finite += std::isfinite(f[i]) ? 0 : 1;
    }
    comm::communicator& m_inner;
};

} // namespace

/// Run every case of `cfg` on `world`, each validated against its exact result; the number
/// that ran in place.
int run_validated(comm::communicator& world, const launch_config& cfg,
                  const std::vector<scheduled_case>& cases) {
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::launch_info launch;
    launch.world_size = world.size();
    jobs::run_context ctx{world, world, *dev, launch, 1, true, 1};
    int ran_in_place = 0;
    for (const auto& pc : cases) {
        const bool inplace = pc.plan.values.text("inplace") == "1";
        const std::string what = pc.plan.variant + (inplace ? " in place " : " out of place ") +
                                 pc.plan.values.text("requested_bytes");
        const case_record rec = run_case(pc, cfg, ctx);
        if (pc.plan.variant == "sendrecv" && inplace) { // no in-place form: skipped
            EXPECT_EQ(text(rec, "status"), "skipped") << what;
            continue;
        }
        EXPECT_EQ(text(rec, "status"), "ok") << what << ": " << text(rec, "error");
        EXPECT_EQ(jobs::attr_number(rec.flat(), "validated"), 1) << what;
        EXPECT_EQ(jobs::attr_number(rec.flat(), "wrong_elements"), 0) << what;
        EXPECT_EQ(jobs::attr_number(rec.flat(), "inplace"), inplace ? 1 : 0) << what;
        // The buffers are the device's (tracked host) memory: the plan's estimate is what the
        // case allocated.
        EXPECT_EQ(rec.peak_host_bytes.at(static_cast<std::size_t>(world.rank())),
                  pc.plan.bytes_per_rank)
            << what;
        ran_in_place += inplace;
    }
    return ran_in_place;
}

TEST(collectives_mpi, every_op_in_and_out_of_place_validates) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const launch_config cfg = config("all", "64", "64K");
    const auto cases = plan(cfg, world->size());
    ASSERT_EQ(cases.size(), 6u * 3u * 2u); // ops x {64, 2K, 64K} x {out, in}
    // up to 16 ranks, every size has a float per rank
    EXPECT_EQ(run_validated(*world, cfg, cases), 5 * 3);
}

TEST(collectives_mpi, nonblocking_forms_in_and_out_of_place_validate) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    launch_config cfg = config("iallreduce", "64", "64K");
    cfg.params["op"] = {"iallreduce", "iallgather", "ireduce_scatter"};
    const auto cases = plan(cfg, world->size());
    ASSERT_EQ(cases.size(), 3u * 3u * 2u); // ops x {64, 2K, 64K} x {out, in}
    EXPECT_EQ(run_validated(*world, cfg, cases), 3 * 3);
}

TEST(collectives_mpi, in_place_reductions_stay_finite_over_many_iterations) {
    // Each in-place allreduce multiplies the largest value by up to the rank count: without
    // the untimed restore, 2 ranks overflow float after about 120 iterations.
    auto host = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    finite_watch watch(*host);
    for (const char* op : {"allreduce", "reduce_scatter"}) {
        launch_config cfg = config(op, "256", "256");
        cfg.params["inplace"] = {"1"};
        cfg.warmup = 2;
        cfg.iters = 300;
        const auto cases = plan(cfg, host->size());
        ASSERT_EQ(cases.size(), 1u);
        const auto dev = kernels::make_executor(device_kind::cpu);
        jobs::launch_info launch;
        launch.world_size = host->size();
        jobs::run_context ctx{watch, *host, *dev, launch, 1, true, 1};
        const case_record rec = run_case(cases[0], cfg, ctx);
        ASSERT_EQ(text(rec, "status"), "ok") << op << ": " << text(rec, "error");
        EXPECT_EQ(jobs::attr_number(rec.flat(), "wrong_elements"), 0) << op;
    }
    EXPECT_GE(watch.reductions, 2 * 2 * 303);
    EXPECT_EQ(watch.non_finite, 0);
}

// --scope on (pretended) nodes of 2 ranks (np=2: 2 nodes of 1): within each node every node
// runs its own communicator, across them only each node's first rank; every operation's
// result is checked exactly on every rank that took part.
TEST(collectives_mpi, intra_and_inter_scopes_validate) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int p = world->size();
    if (p < 2)
        GTEST_SKIP() << "needs two (pretended) nodes: runs at np=2 and 4";
    launch_config cfg = config("all", "64", "2K");
    cfg.params["scope"] = {"intra", "inter"};
    jobs::launch_info launch;
    launch.world_size = p;
    launch.host_bytes_per_rank = 1ull << 30;
    launch.nodes = comm::node_layout::blocks(2, p / 2);
    const auto cases = plan_launch(cfg, launch);
    const auto dev = kernels::make_executor(device_kind::cpu);
    jobs::run_context ctx{*world, *world, *dev, launch, 1, true, 1};
    int ran = 0;
    for (const auto& pc : cases) {
        const std::string scope = pc.plan.values.text("scope");
        const std::string what = pc.plan.variant + " --scope " + scope + " inplace " +
                                 pc.plan.values.text("inplace") + " " +
                                 pc.plan.values.text("requested_bytes");
        const case_record rec = run_case(pc, cfg, ctx);
        if (text(rec, "status") == "skipped")
            continue; // sendrecv in place; a message below a float per rank
        ASSERT_EQ(text(rec, "status"), "ok") << what << ": " << text(rec, "error");
        EXPECT_EQ(jobs::attr_number(rec.flat(), "wrong_elements"), 0) << what;
        EXPECT_EQ(jobs::attr_number(rec.identity, "nodes"), 2) << what;
        EXPECT_EQ(jobs::attr_number(rec.derived, "scope_ranks"), scope == "intra" ? p / 2 : 2)
            << what;
        EXPECT_EQ(jobs::attr_number(rec.derived, "scope_groups"), scope == "intra" ? 2 : 1) << what;
        ++ran;
    }
    EXPECT_GE(ran, 6 * 2); // every op ran at both scopes
}

// sendrecv to rank + shift for every shift the launch has, and --shift node on two pretended
// nodes: each rank receives exactly what rank - shift sent (a ring's shift of 1 would not).
TEST(collectives_mpi, shifted_sendrecv_validates) {
    auto world = comm::make_world(comm_kind::mpi, comm::memory_space::host);
    const int p = world->size();
    if (p < 2)
        GTEST_SKIP() << "a shift needs two ranks: runs at np=2 and 4";
    std::vector<std::string> shifts = {"node"};
    for (int s = 1; s < p; ++s)
        shifts.push_back(std::to_string(s));
    for (const std::string& shift : shifts) {
        launch_config cfg = config("sendrecv", "64", "64K");
        cfg.params["inplace"] = {"0"};
        cfg.params["shift"] = {shift};
        jobs::launch_info launch;
        launch.world_size = p;
        launch.host_bytes_per_rank = 1ull << 30;
        launch.nodes = comm::node_layout::blocks(2, p / 2);
        const auto cases = plan_launch(cfg, launch);
        ASSERT_EQ(cases.size(), 3u) << shift;
        const int want = shift == "node" ? p / 2 : std::stoi(shift);
        EXPECT_EQ(cases[0].plan.variant,
                  want == 1 ? std::string("sendrecv") : "sendrecv/shift" + std::to_string(want))
            << shift;
        EXPECT_EQ(run_validated(*world, cfg, cases), 0) << shift;
    }
}
