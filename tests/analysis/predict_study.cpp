// The synthetic predict study of the tests (predict_study.hpp).
#include "tests/analysis/predict_study.hpp"

#include "analysis/predict/target.hpp"

#include <cmath>
#include <functional>
#include <stdexcept>

namespace ringscale::test_fixture {

using namespace ringscale::analysis::predict;

figures truth(double eta) {
    figures f;
    f.thread_efficiency = eta;
    f.compute = {1 / attn_rate, 1 / gemm_rate, 1 / mem_rate, call_s};
    f.links[0] = {alpha_s, beta_bps};
    f.node_cores = 2;
    return f;
}

namespace {

/// A fixture case whose step time and mean-rank compute_s follow the cost model with the
/// true figures on a 2-core node (threads: 2 at P=1, else 1; every rank unbound).
fixture_case synthetic(const std::string& job, const std::string& variant, int p,
                       const std::vector<std::pair<std::string, std::string>>& text,
                       const std::vector<std::pair<std::string, std::int64_t>>& ints, double eta) {
    fixture_case c;
    c.job = job;
    c.variant = variant;
    c.world_size = p;
    c.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"dtype", "float32"}};
    c.text_params.insert(c.text_params.end(), text.begin(), text.end());
    c.int_params = ints;
    c.affinity_cores = 2;
    target t;
    t.job = job;
    t.variant = variant;
    for (const auto& [k, v] : c.text_params)
        t.identity[k] = v;
    for (const auto& [k, v] : ints)
        t.identity[k] = std::to_string(v);
    t.where = {p, 1, p};
    t.threads_used = p == 1 ? 2 : 1;
    t.affinity_cores = 2;
    const double time = predict_target(t, truth(eta)).time.total();
    figures free = truth(eta); // compute alone: every rank's whole compute, no link waits
    free.links[0] = {0, INFINITY};
    double compute = 0;
    for (int r = 0; r < p; ++r)
        compute += predict_target(t, free, r).time.compute() / p;
    if (!(time > 0))
        throw std::logic_error("synthetic case not priced: " +
                               predict_target(t, truth(eta)).refusal);
    c.base_time_s = time;
    c.comm_fraction = 1 - compute / time;
    c.noise = 0.01;
    c.iterations = 30;
    c.seed = std::hash<std::string>{}(job + variant + std::to_string(p) + text.back().second +
                                      std::to_string(ints.back().second));
    return c;
}

} // namespace

void add_attention(std::vector<fixture_case>& out, int p, std::int64_t s, double eta) {
    const std::vector<std::pair<std::string, std::int64_t>> shape = {
        {"batch", 1},     {"heads", 8},  {"kv_heads", 4},
        {"head_dim", 64}, {"causal", 1}, {"seq_len", s}};
    out.push_back(synthetic("ring_attention", "ring/zigzag", p,
                            {{"layout", "zigzag"}, {"pass", "fwd+bwd"}, {"overlap", "on"}}, shape,
                            eta));
    auto cp_shape = shape;
    cp_shape.insert(cp_shape.begin(), {"ulysses_degree", 0});
    for (const char* v : {"allgather", "ulysses", "hybrid"})
        out.push_back(synthetic("context_parallel", v, p,
                                {{"layout", "zigzag"}, {"pass", "fwd+bwd"}}, cp_shape, eta));
}

void add_train(std::vector<fixture_case>& out, int p, double eta) {
    for (const char* v : {"ddp", "zero1", "fsdp"})
        out.push_back(synthetic("train_step", std::string(v) == "fsdp" ? "fsdp+prefetch" : v, p,
                                {{"cp_variant", "ring"}, {"prefetch", "on"}, {"dp_variant", v}},
                                {{"layers", 2},
                                 {"hidden", 256},
                                 {"heads", 4},
                                 {"vocab", 1024},
                                 {"train_seq_len", 256},
                                 {"tokens", 2048},
                                 {"dp", 0},
                                 {"cp", 1},
                                 {"bucket_mb", 25}},
                                eta));
}

void add_collectives(std::vector<fixture_case>& out, int p) {
    for (const char* op : {"allreduce", "allgather", "reduce_scatter", "alltoall", "sendrecv"}) {
        coll c;
        parse_coll(op, c);
        for (std::int64_t bytes = 4096; bytes <= (16 << 20); bytes *= 4) {
            fixture_case f;
            f.job = "collectives";
            f.variant = op;
            f.world_size = p;
            f.text_params = {{"device", "cpu"}, {"comm", "mpi"}, {"dtype", "float32"}, {"op", op}};
            f.int_params = {{"requested_bytes", bytes}, {"inplace", 0}};
            f.float_params = {{"bytes", static_cast<double>(bytes)}};
            f.base_time_s = alg_steps(c, p) * alpha_s + bytes * busbw_factor(c, p) / beta_bps;
            f.noise = 0.01;
            f.iterations = 30;
            f.affinity_cores = 2;
            f.seed = static_cast<std::uint64_t>(bytes * 7 + p) + std::hash<std::string>{}(op);
            out.push_back(f);
        }
    }
}

void write_p(const std::string& dir, const std::string& name, int p,
             const std::vector<fixture_case>& cases) {
    fixture_file f;
    f.threads_per_rank = p == 1 ? 2 : 1;
    f.cases = cases;
    write_fixture_file(dir + "/" + name + ".h5", f);
}

} // namespace ringscale::test_fixture
