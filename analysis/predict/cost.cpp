#include "cost.hpp"

#include <cmath>

namespace ringscale::analysis::predict {

const char* to_string(link_level l) {
    return l == link_level::intra ? "intra" : "inter";
}

namespace {

/// The blocking collectives by name (parse_coll and to_string).
const std::map<std::string, coll>& coll_names() {
    static const std::map<std::string, coll> names = {
        {"sendrecv", coll::sendrecv},   {"allreduce", coll::allreduce},
        {"allgather", coll::allgather}, {"reduce_scatter", coll::reduce_scatter},
        {"alltoall", coll::alltoall},   {"broadcast", coll::broadcast}};
    return names;
}

} // namespace

bool parse_coll(const std::string& op, coll& out, mpi_call* call) {
    const std::map<std::string, coll>& names = coll_names();
    static const std::map<std::string, coll> nonblocking = {
        {"iallreduce", coll::allreduce},
        {"iallgather", coll::allgather},
        {"ireduce_scatter", coll::reduce_scatter}};
    for (const auto* table : {&names, &nonblocking}) {
        const auto it = table->find(op);
        if (it == table->end())
            continue;
        out = it->second;
        if (call)
            *call = table == &names ? mpi_call::blocking : mpi_call::nonblocking;
        return true;
    }
    return false;
}

const char* to_string(coll op) {
    for (const auto& [name, c] : coll_names())
        if (c == op)
            return name.c_str();
    return "?";
}

double busbw_factor(coll op, int group) {
    // The ring's steps over the group; sendrecv and broadcast move the message once.
    return op == coll::sendrecv || op == coll::broadcast ? 1 : alg_steps(op, group) / group;
}

double alg_steps(coll op, int group) {
    const double g = group;
    switch (op) {
    case coll::allreduce:
        return 2 * (g - 1);
    case coll::allgather:
    case coll::reduce_scatter:
    case coll::alltoall:
        return g - 1;
    case coll::broadcast:
        return std::ceil(std::log2(g));
    default:
        return 1;
    }
}

work& work::operator+=(const work& o) {
    attn_flop += o.attn_flop;
    gemm_flop += o.gemm_flop;
    mem_bytes += o.mem_bytes;
    calls += o.calls;
    return *this;
}

work operator*(const work& w, double f) {
    return {w.attn_flop * f, w.gemm_flop * f, w.mem_bytes * f, w.calls * f};
}

double cost::total() const {
    return compute() + alpha[0] + alpha[1] + beta[0] + beta[1];
}

cost& cost::operator+=(const cost& o) {
    attn += o.attn;
    gemm += o.gemm;
    mem += o.mem;
    calls += o.calls;
    for (int l = 0; l < 2; ++l) {
        alpha[l] += o.alpha[l];
        beta[l] += o.beta[l];
    }
    return *this;
}

cost operator*(const cost& c, double f) {
    cost out = c;
    out.attn *= f;
    out.gemm *= f;
    out.mem *= f;
    out.calls *= f;
    for (int l = 0; l < 2; ++l) {
        out.alpha[l] *= f;
        out.beta[l] *= f;
    }
    return out;
}

cost operator+(cost a, const cost& b) {
    return a += b;
}

const cost& longer(const cost& a, const cost& b) {
    if (std::isnan(b.total())) // an unpriced part stays visible to the caller
        return b;
    return b.total() > a.total() ? b : a;
}

namespace {

/// units * seconds-per-unit, 0 when there is no such work (an uncalibrated figure is only
/// an error where the rank has that work).
double priced(double units, double s_per_unit) {
    return units == 0 ? 0.0 : units * s_per_unit;
}

} // namespace

link_figures link_figures::at(double bytes) const {
    if (!(bytes >= regime_bytes))
        return {alpha_s, beta_bps};
    return {alpha_above_s, beta_above_bps};
}

link_figures level_figures(coll op, link_level level, const figures& f, double bytes) {
    const auto l = static_cast<std::size_t>(level);
    const auto it = f.per_op[l].find(op);
    return (it != f.per_op[l].end() ? it->second : f.links[l]).at(bytes);
}

cost compute_cost(const work& w, const compute_figures& f, double width) {
    cost c;
    c.attn = priced(w.attn_flop, f.s_per_attn_flop) / width;
    c.gemm = priced(w.gemm_flop, f.s_per_gemm_flop) / width;
    c.mem = priced(w.mem_bytes, f.s_per_mem_byte) / width;
    c.calls = priced(w.calls, f.s_per_call);
    return c;
}

cost coll_cost(coll op, double bytes, int group, link_level level, const figures& f) {
    cost c;
    if (group <= 1 || bytes <= 0)
        return c;
    const link_figures lf = level_figures(op, level, f, bytes);
    const auto l = static_cast<std::size_t>(level);
    c.alpha[l] = alg_steps(op, group) * lf.alpha_s;
    c.beta[l] = bytes * busbw_factor(op, group) / lf.beta_bps;
    return c;
}

double expected_max_normal(int p) {
    if (p <= 1)
        return 0;
    // Simpson's rule on [-10, 10]: the integrand is smooth and negligible beyond.
    const int n = 4000;
    const double a = -10, h = 20.0 / n;
    double sum = 0;
    for (int i = 0; i <= n; ++i) {
        const double x = a + i * h;
        const double phi = std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
        const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
        const double f = x * p * phi * std::pow(cdf, p - 1);
        sum += f * (i == 0 || i == n ? 1 : i % 2 ? 4 : 2);
    }
    return sum * h / 3;
}

cost with_rank_jitter(const cost& c, double jitter, int ranks) {
    if (!(jitter > 0) || ranks <= 1)
        return c;
    const double k = std::exp(jitter * expected_max_normal(ranks));
    cost out = c;
    out.attn *= k;
    out.gemm *= k;
    out.mem *= k;
    out.calls *= k;
    return out;
}

std::pair<std::string, double> dominant(const cost& c) {
    const std::pair<const char*, double> parts[] = {
        {"compute attention", c.attn}, {"compute GEMM", c.gemm},    {"compute memory", c.mem},
        {"compute calls", c.calls},    {"alpha intra", c.alpha[0]}, {"beta intra", c.beta[0]},
        {"alpha inter", c.alpha[1]},   {"beta inter", c.beta[1]}};
    std::pair<std::string, double> best{"-", 0};
    for (const auto& [name, v] : parts)
        if (v > best.second)
            best = {name, v};
    const double t = c.total();
    return {best.first, t > 0 ? best.second / t : 0};
}

} // namespace ringscale::analysis::predict
