#include "calibrate_links.hpp"

#include "links.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace ringscale::analysis::predict {

namespace {

/// The row (steps, bytes crossing x link share) of one link observation.
std::vector<double> link_row(const link_obs& o, double node_links) {
    figures f;
    f.node_links = node_links;
    return {alg_steps(o.op, o.group), o.bytes * o.byte_factor * link_share(o.flows, f)};
}

/// alpha and beta from rows (steps, bytes x factor) of one level or one collective.
link_figures fit_link(const std::vector<const link_obs*>& obs, const std::vector<double>& y,
                      double node_links) {
    std::vector<std::vector<double>> x;
    std::vector<double> t, w;
    for (std::size_t i = 0; i < obs.size(); ++i)
        if (std::isfinite(y[i]) && y[i] > 0) {
            x.push_back(link_row(*obs[i], node_links));
            t.push_back(y[i]);
            w.push_back(1 / y[i]);
        }
    if (x.empty())
        return {};
    const std::vector<double> c = nnls_log(x, t, nnls(x, t, w));
    return {c[0], c[1] > 0 ? 1 / c[1] : std::numeric_limits<double>::infinity()};
}

/// Observations of one collective and their statistics.
using link_set = std::pair<std::vector<const link_obs*>, std::vector<double>>;
using link_rows = std::map<coll, link_set>;

/// Sum over collectives of the squared relative residuals of their fits under `node_links`.
double per_op_rss(const link_rows& by_op, double node_links) {
    double rss = 0;
    for (const auto& [op, rows] : by_op) {
        const link_figures lf = fit_link(rows.first, rows.second, node_links);
        for (std::size_t i = 0; i < rows.first.size(); ++i) {
            const double y = rows.second[i];
            if (!(std::isfinite(y) && y > 0))
                continue;
            const std::vector<double> x = link_row(*rows.first[i], node_links);
            const double v = x[0] * lf.alpha_s + x[1] / lf.beta_bps;
            rss += (v / y - 1) * (v / y - 1);
        }
    }
    return rss;
}

/// The node_links that best reconciles link tests at 1 and r > 1 ranks per node (0 when
/// there are not both, or when r, no sharing, fits best).
double fit_node_links(const link_rows& by_op) {
    double most = 1;
    bool single = false;
    for (const auto& [op, rows] : by_op)
        for (const link_obs* o : rows.first) {
            single = single || o->ranks_per_node == 1;
            most = std::max(most, o->flows);
        }
    if (!single || most <= 1)
        return 0;
    double best = 0, best_rss = per_op_rss(by_op, 0);
    for (double links = 1; links < most - 1e-9; links += 0.05) {
        const double rss = per_op_rss(by_op, links);
        if (rss < best_rss * (1 - 1e-9)) {
            best = links;
            best_rss = rss;
        }
    }
    return best;
}

/// The rows of one kind of call.
link_set only_calls(const link_set& rows, mpi_call call) {
    link_set out;
    for (std::size_t i = 0; i < rows.first.size(); ++i)
        if (rows.first[i]->call == call) {
            out.first.push_back(rows.first[i]);
            out.second.push_back(rows.second[i]);
        }
    return out;
}

/// Congestion curve of one collective (calibration::congestion): its shared-link observations'
/// measured / modelled time under `lf` and node_links, the median per bytes per flow.
std::vector<std::pair<double, double>> congestion_curve(const std::vector<const link_obs*>& obs,
                                                        const std::vector<double>& y,
                                                        const link_figures& lf, double node_links) {
    figures f;
    f.node_links = node_links;
    std::map<double, std::vector<double>> ratios;
    for (std::size_t i = 0; i < obs.size(); ++i) {
        if (!(std::isfinite(y[i]) && y[i] > 0) || link_share(obs[i]->flows, f) <= 1)
            continue;
        const std::vector<double> x = link_row(*obs[i], node_links);
        const double v = x[0] * lf.alpha_s + x[1] / lf.beta_bps;
        if (v > 0 && std::isfinite(v))
            ratios[obs[i]->bytes * obs[i]->byte_factor].push_back(y[i] / v);
    }
    std::vector<std::pair<double, double>> curve;
    for (auto& [bytes, r] : ratios)
        curve.emplace_back(bytes, median_inplace(r));
    return curve;
}

} // namespace

void add_link(const pooled_case& c, calibration_set& set) {
    target t = target_of(c);
    coll op;
    mpi_call call = mpi_call::blocking;
    if (c.world_size < 2 || !t.identity.count("op") || !parse_coll(t.identity.at("op"), op, &call))
        return;
    link_obs o;
    o.op = op;
    o.call = call;
    o.level = case_level(t);
    const std::string scope = t.identity.count("scope") ? t.identity.at("scope") : "world";
    o.group = scope == "intra"   ? t.where.ranks_per_node
              : scope == "inter" ? t.where.nodes
                                 : t.where.world;
    o.byte_factor = busbw_factor(op, o.group);
    o.ranks_per_node = t.where.ranks_per_node;
    if (every_rank_crosses(op) && scope == "world" && t.where.nodes > 1) { // placed_coll_cost
        o.byte_factor = static_cast<double>(o.group - t.where.ranks_per_node) / o.group;
        o.flows = t.where.ranks_per_node;
    }
    if (op == coll::sendrecv && scope == "world" && t.where.nodes > 1)
        o.flows = sendrecv_flows(sendrecv_shift(t), o.group, t.where.ranks_per_node);
    const case_data& d = *c.launches.front();
    o.bytes = d.number("bytes").value_or(d.number("requested_bytes").value_or(0));
    o.y = launch_steps(c.launches);
    if (o.group >= 2 && o.bytes > 0 && !o.y.empty())
        set.links.push_back(std::move(o));
}

void fit_links(const calibration_set& set, const std::vector<double>& ly, calibration& cal) {
    for (link_level level : {link_level::intra, link_level::inter}) {
        const auto l = static_cast<std::size_t>(level);
        std::vector<const link_obs*> all;
        std::vector<double> all_y;
        link_rows by_op;
        for (std::size_t i = 0; i < set.links.size(); ++i)
            if (set.links[i].level == level) {
                all.push_back(&set.links[i]);
                all_y.push_back(ly[i]);
                by_op[set.links[i].op].first.push_back(&set.links[i]);
                by_op[set.links[i].op].second.push_back(ly[i]);
            }
        link_rows fitted; // the collectives measured at two or more sizes (blocking calls
        for (const auto& [op, rows] : by_op) { // where there are, the jobs' usual kind)
            const auto pick = only_calls(rows, mpi_call::blocking);
            const auto& use = pick.first.empty() ? rows : pick;
            std::set<double> sizes;
            for (const link_obs* o : use.first)
                sizes.insert(o->bytes);
            if (sizes.size() >= 2)
                fitted[op] = use;
        }
        if (level == link_level::inter)
            cal.node_links = fit_node_links(fitted);
        cal.links[l] = fit_link(all, all_y, cal.node_links);
        for (const auto& [op, rows] : fitted) {
            cal.per_op[l][op] = fit_link(rows.first, rows.second, cal.node_links);
            if (level != link_level::inter || cal.node_links <= 0)
                continue;
            for (mpi_call call : {mpi_call::blocking, mpi_call::nonblocking}) {
                const auto mine = only_calls(by_op.at(op), call);
                auto curve =
                    congestion_curve(mine.first, mine.second, cal.per_op[l][op], cal.node_links);
                if (!curve.empty())
                    cal.congestion[{op, call}] = std::move(curve);
            }
        }
    }
}

} // namespace ringscale::analysis::predict
