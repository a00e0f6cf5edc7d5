// `--at 'field=value,...'`: parse the fields and expand templates into targets
// (declared in target.hpp).
#include "target.hpp"

#include "src/base/checked_count.hpp"
#include "src/base/error.hpp"
#include "src/base/parse.hpp"
#include "src/base/shape_rules.hpp"

#include <fmt/format.h>
#include <set>

namespace ringscale::analysis::predict {

namespace {

/// The fields whose value is a size or a count ("1M" allowed; canonical_value).
const std::set<std::string>& size_fields() {
    static const std::set<std::string> k = {"world_size",
                                            "nodes",
                                            "ranks_per_node",
                                            "threads",
                                            "seq_len",
                                            "seq_len_per_rank",
                                            "batch",
                                            "heads",
                                            "kv_heads",
                                            "head_dim",
                                            "ulysses_degree",
                                            "layers",
                                            "hidden",
                                            "vocab",
                                            "train_seq_len",
                                            "tokens",
                                            "dp",
                                            "cp",
                                            "requested_bytes"};
    return k;
}

/// Identity fields of every job (DESIGN.md), the topology, and what only a number may be:
/// the size fields and these.
const std::set<std::string>& known_fields() {
    static const std::set<std::string> k = [] {
        std::set<std::string> fields = size_fields();
        fields.insert({"dtype",    "device",         "comm",       "scaling",  "attn_kernel",
                       "seq_rule", "causal",         "pass",       "layout",   "overlap",
                       "variant",  "dp_variant",     "cp_variant", "prefetch", "bucket_mb",
                       "lr",       "steps_validate", "tf32",       "op",       "root",
                       "shift",    "inplace",        "scope"});
        return fields;
    }();
    return k;
}

bool is_topology(const std::string& name) {
    return name == "world_size" || name == "nodes" || name == "ranks_per_node";
}

std::string canonical_name(const std::string& name) {
    if (name == "P" || name == "p")
        return "world_size";
    if (name == "S")
        return "seq_len";
    return name;
}

/// A size as decimal text ("1M" -> "1048576") within its declared range: the topology from 1
/// to 2^24 (max_ranks), the shape fields as the launcher's options declare them
/// (src/base/shape_rules.hpp); one line naming the field otherwise, before any arithmetic.
std::string canonical_value(const std::string& name, const std::string& value) {
    if (!size_fields().count(name))
        return value;
    const std::string what = "--at " + name;
    if (is_topology(name))
        return std::to_string(parse_count(value, 1, max_ranks, what));
    rules::size_range r;
    if (!rules::declared_range(name, r))
        return std::to_string(parse_size(value, "at " + name));
    return std::to_string(parse_count(value, r.lo, r.hi, what));
}

/// The targets `fields` make per template, checked as values are added: a count beyond the
/// limit is refused before anything is parsed further or expanded.
constexpr std::size_t max_targets = 100000;

void check_count(const std::vector<at_field>& fields, std::size_t templates = 1) {
    std::size_t combos = templates;
    for (const at_field& f : fields)
        if (__builtin_mul_overflow(combos, f.values.size(), &combos) || combos > max_targets)
            throw config_error(fmt::format("--at: more than {} targets (the fields' values "
                                           "multiply; give fewer values)",
                                           max_targets));
}

bool applies(const target& t, const std::string& name) {
    if (name == "variant")
        return t.job == "context_parallel";
    return t.identity.count(name) > 0;
}

/// world_size, nodes, ranks_per_node of a combination (0 when not set) into a placement. Every
/// given value is at most 2^24 (canonical_value); the product of two is checked all the same.
placement resolve(const target& tpl, std::int64_t w, std::int64_t n, std::int64_t r,
                  const hardware_profile* hw) {
    const bool explicit_r = r > 0;
    if (r == 0 && w > 0 && n > 0) {
        if (w % n != 0)
            throw config_error(
                fmt::format("--at: world_size {} does not divide over {} nodes", w, n));
        r = w / n;
    }
    // Neither given: --hardware's node, else the template's node when it spanned several, else
    // one node of all the ranks (a P=1 case's one rank per node is not a node size: P=8 from
    // it is one node of 8, as on the machine that measured it).
    const bool multi_node = tpl.topology_recorded && tpl.where.nodes > 1;
    if (r == 0)
        r = hw           ? static_cast<std::int64_t>(hw->ranks_per_node)
            : multi_node ? tpl.where.ranks_per_node
                         : (w > 0   ? w
                            : n > 0 ? tpl.where.ranks_per_node
                                    : tpl.where.world);
    r = count_in_range(r, 1, max_ranks, "--at: ranks_per_node");
    if (w == 0)
        w = n > 0 ? checked_product(n, r, "--at: nodes x ranks_per_node") : tpl.where.world;
    if (w < r && !explicit_r && n <= 1) // fewer ranks than a node holds: one partial node
        r = w;
    if (w % r != 0)
        throw config_error(fmt::format("--at: P={} is not a multiple of ranks_per_node={}", w, r));
    if (n > 0 && checked_product(n, r, "--at: nodes x ranks_per_node") != w)
        throw config_error(
            fmt::format("--at: nodes {} x ranks_per_node {} is not world_size {}", n, r, w));
    if (w > max_ranks)
        throw config_error(fmt::format("--at: world_size {} is beyond 2^24", w));
    return {static_cast<int>(w), static_cast<int>(w / r), static_cast<int>(r)};
}

/// Every P given with every ranks_per_node given must be a whole number of nodes: refused
/// here, before any file is read (expand_at checks the combinations the CALIB completes).
void check_topology(const std::vector<at_field>& fields) {
    const at_field* world = nullptr;
    const at_field* per_node = nullptr;
    for (const at_field& f : fields) {
        if (f.name == "world_size")
            world = &f;
        if (f.name == "ranks_per_node")
            per_node = &f;
    }
    if (!world || !per_node)
        return;
    for (const std::string& w : world->values)
        for (const std::string& r : per_node->values)
            if (std::stoll(w) % std::stoll(r) != 0)
                throw config_error(
                    fmt::format("--at: P={} is not a multiple of ranks_per_node={}", w, r));
}

/// The variant a train_step, ring_attention or collectives identity implies.
void refresh_variant(target& t) {
    auto get = [&](const char* k, const char* d) {
        const auto it = t.identity.find(k);
        return it == t.identity.end() ? std::string(d) : it->second;
    };
    if (t.job == "ring_attention")
        t.variant = "ring/" + get("layout", "contiguous");
    if (t.job == "collectives") // the variant is the op: --at op=alltoall is an all-to-all
        t.variant = get("op", t.variant.c_str());
    if (t.job == "train_step") {
        t.variant = get("dp_variant", "ddp");
        if (t.variant == "fsdp" && parse_bool(get("prefetch", "off"), "prefetch"))
            t.variant += "+prefetch";
        if (get("cp", "1") != "1")
            t.variant += "/cp-" + get("cp_variant", "ring");
    }
    t.label = t.job + "/" + t.variant;
    for (const auto& [k, v] : t.identity)
        t.label += " " + k + "=" + v;
}

} // namespace

std::vector<at_field> parse_at(const std::string& text) {
    std::vector<at_field> out;
    for (const std::string& item : split_list(text, "--at")) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) {
            if (out.empty())
                throw config_error(
                    fmt::format("--at: '{}' is not field=value (e.g. --at 'nodes=4,8,seq_len=1M')",
                                item.substr(0, 60)));
            out.back().values.push_back(canonical_value(out.back().name, item));
            check_count(out);
            continue;
        }
        const std::string name = canonical_name(item.substr(0, eq));
        if (!known_fields().count(name))
            throw config_error(fmt::format("--at: unknown field '{}' (an identity field, nodes or "
                                           "ranks_per_node)",
                                           item.substr(0, std::min<std::size_t>(eq, 60))));
        for (const at_field& f : out)
            if (f.name == name)
                throw config_error(fmt::format("--at: field '{}' given twice", name));
        out.push_back({name, {canonical_value(name, item.substr(eq + 1))}});
        check_count(out);
    }
    check_topology(out);
    return out;
}

std::vector<target> expand_at(const std::vector<target>& templates,
                              const std::vector<at_field>& fields, const hardware_profile* hw) {
    check_count(fields, templates.size());
    std::size_t combos = 1;
    for (const at_field& f : fields)
        combos *= f.values.size();
    std::set<std::string> used, distinct;
    std::vector<target> out;
    for (const target& tpl : templates)
        for (std::size_t k = 0; k < combos; ++k) {
            target t = tpl;
            t.measured = nullptr;
            t.threads_used.reset();
            t.affinity_cores.reset();
            t.node_cores_used.reset();
            std::int64_t topo[3] = {0, 0, 0}; // world_size, nodes, ranks_per_node
            std::size_t rest = k;
            for (const at_field& f : fields) {
                const std::string& v = f.values[rest % f.values.size()];
                rest /= f.values.size();
                if (is_topology(f.name)) {
                    topo[f.name == "world_size" ? 0 : f.name == "nodes" ? 1 : 2] = std::stoll(v);
                    used.insert(f.name);
                } else if (applies(t, f.name)) {
                    (f.name == "variant" ? t.variant : t.identity[f.name]) = v;
                    used.insert(f.name);
                }
            }
            t.where = resolve(tpl, topo[0], topo[1], topo[2], hw);
            if (t.identity.count("device") && tpl.identity.count("device") &&
                t.identity.at("device") != tpl.identity.at("device"))
                t.device_key = t.identity.at("device"); // figures of that device, if any
            if (hw) { // the profile's device, unless --at names one
                auto set = [&](const char* k, const std::string& v) {
                    bool given = false;
                    for (const at_field& f : fields)
                        given = given || f.name == k;
                    if (!given)
                        t.identity[k] = v;
                };
                set("device", hw->device);
                set("dtype", hw->dtype);
                t.device_key = hw->device + " (" + hw->name + ")";
            }
            refresh_variant(t);
            // Templates that differed only in a field --at sets are one target now.
            const std::string key =
                fmt::format("{} @{}x{}", t.label, t.where.nodes, t.where.ranks_per_node);
            if (distinct.insert(key).second)
                out.push_back(std::move(t));
        }
    for (const at_field& f : fields)
        if (!used.count(f.name))
            throw config_error(
                fmt::format("--at: field '{}' is in no calibrated case's identity", f.name));
    return out;
}

} // namespace ringscale::analysis::predict
