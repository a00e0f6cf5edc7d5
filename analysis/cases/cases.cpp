#include "cases.hpp"

#include "case_groups.hpp"

#include "src/base/results_schema.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

namespace ringscale::analysis {

namespace {

std::optional<double> as_number(const std::string& s) {
    if (s.empty())
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size())
        return std::nullopt;
    return v;
}

std::string join_params(const param_list& params) {
    std::string out;
    for (const auto& [k, v] : params)
        out += fmt::format(" {}={}", k, v);
    return out;
}

bool params_less(const param_list& a, const param_list& b) {
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (a[i].first != b[i].first)
            return a[i].first < b[i].first;
        if (a[i].second != b[i].second)
            return text_less(a[i].second, b[i].second);
    }
    return a.size() < b.size();
}

/// Weak scaling: may `c` join the family whose first member is `ref`? Every parameter must
/// be equal or (integers) proportional to P.
bool weak_match(const pooled_case& ref, const pooled_case& c, std::set<std::string>& scaled) {
    if (ref.params.size() != c.params.size())
        return false;
    for (std::size_t i = 0; i < c.params.size(); ++i) {
        const auto& [name, value] = c.params[i];
        if (ref.params[i].first != name)
            return false;
        if (ref.params[i].second == value)
            continue;
        const auto a = as_number(ref.params[i].second);
        const auto b = as_number(value);
        if (!a || !b || *a * c.world_size != *b * ref.world_size)
            return false;
        scaled.insert(name);
    }
    return true;
}

} // namespace

param_list common_params(const std::vector<const pooled_case*>& cases) {
    if (cases.size() < 2)
        return {};
    param_list common = cases.front()->params;
    for (const pooled_case* c : cases) {
        param_list kept;
        std::set_intersection(common.begin(), common.end(), c->params.begin(), c->params.end(),
                              std::back_inserter(kept));
        common.swap(kept);
    }
    return common;
}

std::string strip_params(std::string label, const param_list& common) {
    for (const auto& [k, v] : common) {
        const std::string token = fmt::format(" {}={}", k, v);
        for (auto pos = label.find(token); pos != std::string::npos; pos = label.find(token))
            label.erase(pos, token.size());
    }
    return label;
}

bool text_less(const std::string& a, const std::string& b) {
    const auto x = as_number(a);
    const auto y = as_number(b);
    if (x && y)
        return *x < *y;
    return a < b;
}

param_list case_params(const case_data& c) {
    param_list out;
    for (const auto& [name, value] : c.identity)
        if (is_identity_param(name))
            out.emplace_back(name, value.text);
    return out; // std::map iteration is already sorted by name
}

namespace {

/// The case's topology: nodes and ranks per node (one node of every rank when unrecorded).
std::pair<int, int> topology(const case_data& c) {
    const int nodes = static_cast<int>(c.number(schema::attr::nodes).value_or(1));
    return {nodes, static_cast<int>(c.number(schema::attr::ranks_per_node).value_or(c.world_size))};
}

} // namespace

std::string case_key(const case_data& c) {
    const auto [nodes, per_node] = topology(c);
    std::string key =
        fmt::format("{}|{}|P={}|nodes={}x{}", c.job, c.variant, c.world_size, nodes, per_node);
    for (const auto& [k, v] : case_params(c))
        key += fmt::format("|{}={}", k, v);
    return key;
}

std::string case_label(const case_data& c, bool with_p) {
    std::string s = fmt::format("{}/{}{}", c.job, c.variant, join_params(case_params(c)));
    return with_p ? s + fmt::format(" P={}", c.world_size) : s;
}

std::vector<double> pooled_case::steps() const {
    std::vector<double> out;
    for (const case_data* c : launches)
        out.insert(out.end(), c->step_s.begin(), c->step_s.end());
    return out;
}

bool pooled_case::incomplete() const {
    auto inc = [](const case_data* c) { return !c->file->complete; };
    return std::any_of(launches.begin(), launches.end(), inc) ||
           std::any_of(not_ok.begin(), not_ok.end(), inc);
}

std::string pooled_case::label() const {
    const std::string tag =
        kept_apart && !resources.empty() ? " [" + resources.front() + "]" : std::string();
    return fmt::format("{}/{}{}{}", job, variant, join_params(params), tag);
}

std::string resource_signature(const case_data& c) {
    if (c.threads.empty() || c.affinity_cores.empty())
        return "";
    return fmt::format("threads={} cores={}", *std::max_element(c.threads.begin(), c.threads.end()),
                       *std::min_element(c.affinity_cores.begin(), c.affinity_cores.end()));
}

std::vector<std::string> resource_notes(const std::vector<pooled_case>& pooled) {
    std::vector<std::string> out;
    std::set<std::string> apart;
    for (const pooled_case& p : pooled) {
        if (p.resources.size() > 1)
            out.push_back(fmt::format("{} P={}: launches with {} pooled (--pool-resources); "
                                      "its statistics mix them",
                                      p.label(), p.world_size, fmt::join(p.resources, " and ")));
        if (p.kept_apart && apart.insert(p.key).second)
            out.push_back(fmt::format("{}/{}{} P={}: launches ran with different threads or CPU "
                                      "cores; kept apart, each labelled [threads=T cores=C] "
                                      "(--pool-resources pools them)",
                                      p.job, p.variant, join_params(p.params), p.world_size));
    }
    return out;
}

std::vector<pooled_case> pool_cases(const std::vector<case_data>& cases, bool pool_resources) {
    std::map<std::string, pooled_case> by_key;
    std::map<std::string, std::set<std::string>> signatures; // case key -> resource signatures
    for (const case_data& c : cases)
        if (c.ok())
            signatures[case_key(c)].insert(resource_signature(c));
    for (const case_data& c : cases) {
        const std::string key = case_key(c);
        const std::string sig = resource_signature(c);
        const bool apart = !pool_resources && signatures[key].size() > 1;
        auto [it, inserted] = by_key.try_emplace(apart ? key + "|" + sig : key);
        pooled_case& p = it->second;
        if (c.ok() && std::find(p.resources.begin(), p.resources.end(), sig) == p.resources.end())
            p.resources.push_back(sig);
        if (inserted) {
            p.kept_apart = apart;
            p.key = key;
            p.job = c.job;
            p.variant = c.variant;
            p.world_size = c.world_size;
            std::tie(p.nodes, p.ranks_per_node) = topology(c);
            p.scaling = c.text(schema::attr::scaling, "strong");
            p.params = case_params(c);
        }
        if (c.ok() && !c.step_s.empty())
            p.launches.push_back(&c);
        else
            p.not_ok.push_back(&c);
    }
    std::vector<pooled_case> out;
    for (auto& [k, p] : by_key)
        out.push_back(std::move(p));
    std::sort(out.begin(), out.end(), [](const pooled_case& a, const pooled_case& b) {
        if (a.job != b.job)
            return a.job < b.job;
        if (a.variant != b.variant)
            return a.variant < b.variant;
        if (a.params != b.params)
            return params_less(a.params, b.params);
        if (a.world_size != b.world_size)
            return a.world_size < b.world_size;
        return a.nodes < b.nodes;
    });
    return out;
}

namespace {

/// May `c` join a family whose first member is `ref`, as far as the topology goes? Over P on
/// one node, or over the node count at the same ranks per node.
bool same_topology_axis(const pooled_case& ref, const pooled_case& c) {
    if (ref.nodes == 1 || c.nodes == 1)
        return ref.nodes == 1 && c.nodes == 1;
    return ref.ranks_per_node == c.ranks_per_node;
}

/// A family over nodes starts from the one-node case of the same ranks per node, when there
/// is one: 1, 2, 4 nodes of 2 ranks.
void add_one_node_base(family& fam, const std::vector<const pooled_case*>& todo) {
    const pooled_case& ref = *fam.members.front();
    for (const pooled_case* c : todo) {
        std::set<std::string> scaled;
        if (c->nodes == 1 && c->ranks_per_node == ref.ranks_per_node && c->job == ref.job &&
            c->variant == ref.variant && c->scaling == ref.scaling &&
            c->world_size < ref.world_size &&
            (c->scaling == "weak" ? weak_match(ref, *c, scaled) : ref.params == c->params)) {
            fam.members.insert(fam.members.begin(), c);
            return;
        }
    }
}

} // namespace

std::vector<family> find_families(const std::vector<pooled_case>& pooled) {
    std::vector<const pooled_case*> todo;
    for (const auto& p : pooled)
        if (!p.launches.empty())
            todo.push_back(&p);
    std::stable_sort(todo.begin(), todo.end(), [](const pooled_case* a, const pooled_case* b) {
        return a->world_size < b->world_size;
    });
    std::vector<family> out;
    std::vector<std::set<std::string>> scaled_sets;
    for (const pooled_case* c : todo) {
        bool placed = false;
        for (std::size_t f = 0; f < out.size() && !placed; ++f) {
            family& fam = out[f];
            const pooled_case& ref = *fam.members.front();
            if (ref.job != c->job || ref.variant != c->variant || ref.scaling != c->scaling ||
                fam.members.back()->world_size == c->world_size || !same_topology_axis(ref, *c))
                continue;
            std::set<std::string> scaled = scaled_sets[f];
            const bool match =
                c->scaling == "weak" ? weak_match(ref, *c, scaled) : ref.params == c->params;
            if (match) {
                fam.members.push_back(c);
                scaled_sets[f] = scaled;
                placed = true;
            }
        }
        if (!placed) {
            out.push_back(family{c->label(), c->scaling, {}, {c}});
            scaled_sets.emplace_back();
        }
    }
    for (std::size_t f = 0; f < out.size(); ++f) {
        if (out[f].members.front()->nodes > 1) {
            out[f].label += fmt::format(" (over nodes, {} ranks per node)",
                                        out[f].members.front()->ranks_per_node);
            add_one_node_base(out[f], todo);
        }
        out[f].scaled_params.assign(scaled_sets[f].begin(), scaled_sets[f].end());
        if (!out[f].scaled_params.empty())
            out[f].label +=
                fmt::format(" (weak; {} grow with P)", fmt::join(out[f].scaled_params, ","));
    }
    return out;
}

pooled_case without_marked(const pooled_case& p) {
    pooled_case out = p;
    out.launches.clear();
    for (const case_data* c : p.launches)
        if (c->mark().empty())
            out.launches.push_back(c);
    return out;
}

std::string marks_text(const pooled_case& p, bool with_reason) {
    std::size_t contended = 0, drifted = 0;
    std::string first;
    for (const case_data* c : p.launches) {
        const std::string m = c->mark();
        if (m.empty())
            continue;
        (c->contention.empty() ? drifted : contended) += 1;
        if (first.empty())
            first = m;
    }
    if (contended + drifted == 0)
        return "";
    const std::size_t n = p.launches.size();
    std::string out = contended > 0 ? fmt::format("contended {}/{}", contended, n) : "";
    if (drifted > 0)
        out += fmt::format("{}drift {}/{}", out.empty() ? "" : ", ", drifted, n);
    return with_reason ? out + " (" + first + ")" : out;
}

} // namespace ringscale::analysis
