#include "links.hpp"

#include <algorithm>

namespace ringscale::analysis::predict {

double link_share(double flows, const figures& f) {
    return f.node_links > 0 ? std::max(1.0, flows / f.node_links) : 1.0;
}

cost shared_inter(const cost& c, double flows, const figures& f) {
    cost out = c;
    out.beta[1] *= link_share(flows, f);
    return out;
}

bool every_rank_crosses(coll op) {
    return op == coll::allgather || op == coll::reduce_scatter || op == coll::alltoall;
}

cost placed_coll_cost(coll op, double bytes, int group, int per_node, const figures& f) {
    if (per_node >= group)
        return coll_cost(op, bytes, group, link_level::intra, f);
    if (!every_rank_crosses(op))
        return coll_cost(op, bytes, group, link_level::inter, f);
    if (group <= 1 || bytes <= 0)
        return {};
    const double g = group;
    cost inside, outside;
    inside.beta[0] = bytes * (per_node - 1) / g / level_figures(op, link_level::intra, f).beta_bps;
    const link_figures lf = level_figures(op, link_level::inter, f);
    outside.alpha[1] = (g - 1) * lf.alpha_s;
    outside.beta[1] = bytes * (g - per_node) / g * link_share(per_node, f) / lf.beta_bps;
    return longer(outside, inside);
}

cost alltoall_cost(double bytes, int group, int per_node, const figures& f) {
    return placed_coll_cost(coll::alltoall, bytes, group, per_node, f);
}

} // namespace ringscale::analysis::predict
