#include "case_groups.hpp"

#include "src/base/results_schema.hpp"

#include <iterator>
#include <sstream>

namespace ringscale::analysis {

namespace {

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r");
    const auto b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string underscores(std::string s) {
    for (char& ch : s)
        if (ch == '-')
            ch = '_';
    return s;
}

attr_value integer_value(const std::string& text) {
    attr_value v;
    v.text = text;
    try {
        v.number = static_cast<double>(std::stoll(text));
        v.is_integer = true;
    } catch (const std::exception&) {
        v.number.reset();
    }
    return v;
}

/// ringscale/1 recorded a train_step case with every option of its launch, other jobs'
/// (--op, --seq-len, ...) included: keep the launcher's own and train_step's.
void drop_foreign_train_options(std::map<std::string, attr_value>& identity) {
    for (auto it = identity.begin(); it != identity.end();)
        it = schema::v1_train_step_identity(it->first) ? std::next(it) : identity.erase(it);
}

} // namespace

std::string config_value(const std::string& config_text, const std::string& key) {
    std::istringstream in(config_text);
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq == std::string::npos || underscores(trim(line.substr(0, eq))) != underscores(key))
            continue;
        const std::string value = trim(line.substr(eq + 1));
        return value.find(',') == std::string::npos ? value : "";
    }
    return "";
}

void rebuild_v1_identity(case_data& c, const std::string& config_text) {
    c.identity.clear();
    for (const auto& [name, value] : c.attrs)
        if (schema::v1_attr_group(name) == schema::attr_group::identity)
            c.identity.emplace(name, value);
    // ringscale/1 overwrote these options with values resolved from P; the job file keeps
    // what the user chose when it was one value (not a sweep list).
    const std::string threads = config_value(config_text, schema::attr::threads);
    if (!threads.empty())
        c.identity[schema::attr::threads] = integer_value(threads);
    if (c.job == "train_step") {
        drop_foreign_train_options(c.identity);
        if (!config_value(config_text, schema::attr::dp).empty())
            c.identity[schema::attr::dp] =
                integer_value(config_value(config_text, schema::attr::dp));
    }
    if (c.job == "context_parallel") {
        const std::string u = config_value(config_text, "ulysses-degree");
        if (!u.empty())
            c.identity[schema::attr::ulysses_degree] = integer_value(u);
        if (c.variant.rfind("hybrid/", 0) == 0) // "hybrid/u2": the degree P gave it
            c.identity[schema::attr::variant].text = c.variant = "hybrid";
    }
}

void add_identity_defaults(case_data& c) {
    for (const auto& [name, text] : schema::identity_defaults(c.job, c.world_size)) {
        if (c.identity.count(name))
            continue;
        attr_value v = integer_value(text);
        if (!v.is_integer)
            v.text = text;
        c.identity[name] = v;
        c.attrs.emplace(name, v);
    }
}

bool is_identity_param(const std::string& name) {
    return name != schema::attr::job && name != schema::attr::variant &&
           !schema::is_scaling_axis(name);
}

} // namespace ringscale::analysis
