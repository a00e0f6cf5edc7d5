#include "calibrate_links.hpp"

#include "links.hpp"

#include "analysis/statistics/bootstrap.hpp"

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

/// The modelled time of row `o` under `lf` (the regime of its size).
double modelled(const link_obs& o, const link_figures& lf, double node_links) {
    const std::vector<double> x = link_row(o, node_links);
    const link_figures r = lf.at(o.bytes);
    return x[0] * r.alpha_s + x[1] / r.beta_bps;
}

/// |log(measured / modelled)| of every usable row under `lf`, with the row's size.
std::vector<std::pair<double, double>> misfits(const link_set& rows, const link_figures& lf,
                                               double node_links) {
    std::vector<std::pair<double, double>> out;
    for (std::size_t i = 0; i < rows.first.size(); ++i) {
        const double y = rows.second[i], v = modelled(*rows.first[i], lf, node_links);
        if (std::isfinite(y) && y > 0 && std::isfinite(v) && v > 0)
            out.emplace_back(std::fabs(std::log(y / v)), rows.first[i]->bytes);
    }
    return out;
}

double total(const std::vector<std::pair<double, double>>& m) {
    double s = 0;
    for (const auto& [e, b] : m)
        s += e;
    return s;
}

fit_quality quality_of(const link_set& rows, const link_figures& lf, double node_links) {
    fit_quality q;
    const auto m = misfits(rows, lf, node_links);
    std::vector<double> e;
    std::set<double> sizes;
    for (const auto& [err, bytes] : m) {
        e.push_back(err);
        sizes.insert(bytes);
        if (!(err <= q.max_abs)) {
            q.max_abs = err;
            q.worst_bytes = bytes;
        }
    }
    q.rows = static_cast<int>(e.size());
    q.sizes = static_cast<int>(sizes.size());
    if (!e.empty()) {
        q.median_abs = median_inplace(e);
        q.min_bytes = *sizes.begin();
        q.max_bytes = *sizes.rbegin();
    }
    return q;
}

/// The rows of `rows` whose size is in [lo, hi].
link_set sizes_between(const link_set& rows, double lo, double hi) {
    link_set out;
    for (std::size_t i = 0; i < rows.first.size(); ++i)
        if (rows.first[i]->bytes >= lo && rows.first[i]->bytes <= hi) {
            out.first.push_back(rows.first[i]);
            out.second.push_back(rows.second[i]);
        }
    return out;
}

/// Regime change: one alpha and beta misfits some size by more than 2x ...
constexpr double regime_misfit = 0.6931471805599453; // log 2
/// ... and two regimes, split between two measured sizes with two or more below, fit the
/// sizes at least this much better (sum of |log ratio|): then the split is modelled.
constexpr double regime_gain = 2.0;

/// The upper regime of a split: alpha and beta fitted on its rows, or, where they are all of
/// one size (a collapse seen only at the largest size measured), the lower regime's alpha and
/// the busbw that size measured (one size cannot tell alpha from beta).
link_figures fit_upper(const link_set& above, const link_figures& lo, double node_links) {
    std::set<double> sizes;
    for (const link_obs* o : above.first)
        sizes.insert(o->bytes);
    if (sizes.size() >= 2)
        return fit_link(above.first, above.second, node_links);
    std::vector<double> per_byte; // seconds per byte crossing, beyond the latency steps
    for (std::size_t i = 0; i < above.first.size(); ++i) {
        const std::vector<double> x = link_row(*above.first[i], node_links);
        const double rest = above.second[i] - x[0] * lo.alpha_s;
        if (std::isfinite(rest) && rest > 0 && x[1] > 0)
            per_byte.push_back(rest / x[1]);
    }
    if (per_byte.empty())
        return {};
    return {lo.alpha_s, 1 / median_inplace(per_byte)};
}

/// One collective's figures: one regime, or two (link_figures' regime_bytes) where a busbw
/// collapse or jump past some size makes one alpha and beta misfit; `q` says how well.
link_figures fit_regimes(const link_set& rows, double node_links, fit_quality& q) {
    const link_figures one = fit_link(rows.first, rows.second, node_links);
    const auto m1 = misfits(rows, one, node_links);
    q = quality_of(rows, one, node_links);
    std::vector<double> sizes;
    for (const auto& [e, b] : m1)
        sizes.push_back(b);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (sizes.size() < 3 || !(q.max_abs > regime_misfit))
        return one;
    link_figures best = one;
    double best_cost = total(m1) / regime_gain;
    for (std::size_t j = 1; j + 1 < sizes.size(); ++j) { // sizes[0..j] below, the rest above
        const link_set below = sizes_between(rows, 0, sizes[j]);
        const link_figures lo = fit_link(below.first, below.second, node_links);
        const link_figures hi =
            fit_upper(sizes_between(rows, sizes[j + 1], INFINITY), lo, node_links);
        if (!(hi.beta_bps > 0))
            continue;
        link_figures two = lo;
        two.regime_bytes = std::sqrt(sizes[j] * sizes[j + 1]);
        two.alpha_above_s = hi.alpha_s;
        two.beta_above_bps = hi.beta_bps;
        const double cost = total(misfits(rows, two, node_links));
        if (cost < best_cost) {
            best = two;
            best_cost = cost;
        }
    }
    if (best.two_regimes()) {
        const fit_quality single = q;
        q = quality_of(rows, best, node_links);
        q.upper_sizes = static_cast<int>(std::count_if(
            sizes.begin(), sizes.end(), [&](double b) { return b >= best.regime_bytes; }));
        q.one_regime_max_abs = single.max_abs;
        q.one_regime_worst_bytes = single.worst_bytes;
    }
    return best;
}

/// Sum over collectives of the squared relative residuals of their fits under `node_links`.
double per_op_rss(const link_rows& by_op, double node_links) {
    double rss = 0;
    for (const auto& [op, rows] : by_op) {
        fit_quality q;
        const link_figures lf = fit_regimes(rows, node_links, q);
        for (std::size_t i = 0; i < rows.first.size(); ++i) {
            const double y = rows.second[i];
            if (!(std::isfinite(y) && y > 0))
                continue;
            const double v = modelled(*rows.first[i], lf, node_links);
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
        const double v = modelled(*obs[i], lf, node_links);
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
        cal.link_quality[l] = quality_of({all, all_y}, cal.links[l], cal.node_links);
        for (const auto& [op, rows] : fitted) {
            cal.per_op[l][op] = fit_regimes(rows, cal.node_links, cal.per_op_quality[l][op]);
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
