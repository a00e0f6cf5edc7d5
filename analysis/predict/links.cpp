#include "links.hpp"

#include <algorithm>
#include <cmath>

namespace ringscale::analysis::predict {

double link_share(double flows, const figures& f) {
    return f.node_links > 0 ? std::max(1.0, flows / f.node_links) : 1.0;
}

double congestion_factor(coll op, double flow_bytes, double flows, const figures& f,
                         mpi_call call) {
    auto it = f.congestion.find({op, call});
    if (it == f.congestion.end())
        it = f.congestion.find({op, mpi_call::blocking});
    if (link_share(flows, f) <= 1 || it == f.congestion.end() || it->second.empty() ||
        !(flow_bytes > 0))
        return 1;
    const auto& curve = it->second;
    if (flow_bytes <= curve.front().first)
        return curve.front().second;
    if (flow_bytes >= curve.back().first)
        return curve.back().second;
    const auto hi =
        std::lower_bound(curve.begin(), curve.end(), flow_bytes,
                         [](const std::pair<double, double>& p, double b) { return p.first < b; });
    const auto lo = hi - 1;
    const double w = std::log(flow_bytes / lo->first) / std::log(hi->first / lo->first);
    return lo->second + w * (hi->second - lo->second);
}

cost shared_inter(const cost& c, double flows, const figures& f) {
    cost out = c;
    out.beta[1] *= link_share(flows, f);
    return out;
}

bool every_rank_crosses(coll op) {
    return op == coll::allgather || op == coll::reduce_scatter || op == coll::alltoall;
}

int sendrecv_flows(int shift, int group, int per_node) {
    if (group < 2 || per_node < 1)
        return 1;
    int flows = 0;
    for (int r = 0; r < std::min(per_node, group); ++r) // node 0's ranks
        flows += ((r + shift) % group + group) % group / per_node != 0;
    return std::max(flows, 1);
}

namespace {

/// An every-rank op over `group` ranks, `per_node` of them on a node, while `flows` ranks of
/// the node send across at once (placed_coll_cost).
cost every_rank_cost(coll op, double bytes, int group, int per_node, int flows, const figures& f,
                     mpi_call call) {
    if (group <= 1 || bytes <= 0)
        return {};
    const double g = group;
    cost inside, outside;
    if (per_node > 1) // one rank a node has nothing to move inside it (no figure needed)
        inside.beta[0] =
            bytes * (per_node - 1) / g / level_figures(op, link_level::intra, f, bytes).beta_bps;
    const link_figures lf = level_figures(op, link_level::inter, f, bytes);
    outside.alpha[1] = (g - 1) * lf.alpha_s;
    const double flow_bytes = bytes * (g - per_node) / g;
    outside.beta[1] = flow_bytes * link_share(flows, f) / lf.beta_bps *
                      congestion_factor(op, flow_bytes, flows, f, call);
    return longer(outside, inside);
}

} // namespace

cost shared_cores(const cost& c, int per_node, const figures& f) {
    const double ranks_per_core = per_node / f.node_cores;
    if (f.gpu || !(ranks_per_core > 1))
        return c;
    cost out = c;
    out.alpha[0] *= ranks_per_core;
    out.beta[0] *= ranks_per_core;
    return out;
}

cost placed_coll_cost(coll op, double bytes, int group, int per_node, const figures& f,
                      mpi_call call, int shift) {
    if (per_node >= group)
        return shared_cores(coll_cost(op, bytes, group, link_level::intra, f), per_node, f);
    if (op == coll::sendrecv) {
        const int flows = sendrecv_flows(shift, group, per_node);
        cost c = shared_inter(coll_cost(op, bytes, group, link_level::inter, f), flows, f);
        c.beta[1] *= congestion_factor(op, bytes, flows, f, call);
        return c;
    }
    if (!every_rank_crosses(op))
        return coll_cost(op, bytes, group, link_level::inter, f);
    return every_rank_cost(op, bytes, group, per_node, per_node, f, call);
}

cost alltoall_cost(double bytes, int group, int per_node, const figures& f, int flows) {
    if (per_node >= group)
        return shared_cores(coll_cost(coll::alltoall, bytes, group, link_level::intra, f), per_node,
                            f);
    return every_rank_cost(coll::alltoall, bytes, group, per_node, flows > 0 ? flows : per_node, f,
                           mpi_call::blocking);
}

} // namespace ringscale::analysis::predict
