#include "src/base/results_schema.hpp"

#include "src/base/dtype_names.hpp"

#include <map>
#include <set>

namespace ringscale::schema {

namespace {

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool is_outcome(const std::string& name) {
    static const std::set<std::string> names = {
        attr::status,    attr::error,          attr::validated,  attr::max_abs_err,
        attr::tolerance, attr::wrong_elements, attr::final_loss, attr::hw_counters};
    return names.count(name) > 0 || starts_with(name, attr::validate_prefix) ||
           starts_with(name, attr::acc_prefix);
}

} // namespace

const char* group_name(attr_group g) {
    switch (g) {
    case attr_group::identity:
        return "identity";
    case attr_group::run:
        return "run";
    case attr_group::derived:
        return "derived";
    case attr_group::outcome:
        return "outcome";
    }
    return "?";
}

attr_group job_attr_group(const std::string& name) {
    return is_outcome(name) ? attr_group::outcome : attr_group::derived;
}

attr_group v1_attr_group(const std::string& name) {
    if (is_outcome(name))
        return attr_group::outcome;
    if (name == attr::warmup || name == attr::iterations || name == attr::repeat)
        return attr_group::run;
    // ringscale/1 stored what the jobs computed under the same names as the options, so the
    // user's value of dp (0 = auto) or ulysses-degree is lost: these are derived from P.
    static const std::set<std::string> derived = {attr::flops_per_iter,
                                                  attr::comm_bytes_per_iter,
                                                  attr::busbw_factor,
                                                  attr::tokens_per_iter,
                                                  attr::count,
                                                  attr::flop_convention,
                                                  attr::memory_convention,
                                                  attr::mfu_dtype,
                                                  attr::dp,
                                                  attr::sequences,
                                                  attr::parameters,
                                                  attr::cp_layout,
                                                  attr::ulysses_degree,
                                                  attr::ring_degree,
                                                  attr::bytes,
                                                  attr::gathered_kv_bytes};
    return derived.count(name) > 0 ? attr_group::derived : attr_group::identity;
}

bool v1_train_step_identity(const std::string& name) {
    static const std::set<std::string> own = {
        attr::job,   attr::variant,       attr::world_size,    attr::device,    attr::comm,
        attr::dtype, attr::threads,       attr::scaling,       attr::layers,    attr::hidden,
        attr::heads, attr::vocab,         attr::train_seq_len, attr::tokens,    attr::dp,
        attr::cp,    attr::dp_variant,    attr::cp_variant,    attr::bucket_mb, attr::prefetch,
        attr::lr,    attr::steps_validate};
    return own.count(name) > 0;
}

bool is_scaling_axis(const std::string& name) {
    return name == attr::world_size || name == attr::nodes || name == attr::ranks_per_node;
}

std::string acc_attr(const std::string& who, const std::string& tensor, const std::string& stat) {
    return std::string(attr::acc_prefix) + who + tensor + "_" + stat;
}

std::vector<std::pair<std::string, std::string>> identity_defaults(const std::string& job,
                                                                   long long world_size) {
    std::vector<std::pair<std::string, std::string>> out = {
        {attr::nodes, "1"}, {attr::ranks_per_node, std::to_string(world_size)}};
    if (job == "collectives")
        out.emplace_back(attr::scope, "world");
    if (job == "context_parallel")
        out.emplace_back(attr::ulysses_placement, "node");
    if (job == "ring_attention" || job == "context_parallel") { // before the accuracy study
        out.emplace_back(attr::merge, "fp32");
        out.emplace_back(attr::inputs, "uniform");
    }
    if (job == "train_step") {
        out.emplace_back(attr::cp_placement, "node");
        out.emplace_back(attr::dtype, "fp32"); // before --dtype
    }
    return out;
}

const std::vector<std::string>* allowed_values(const std::string& name) {
    static const std::map<std::string, std::vector<std::string>> values = {
        {attr::scope, {"world", "intra", "inter"}},
        {attr::ulysses_placement, {"node", "across"}},
        {attr::cp_placement, {"node", "across"}},
        {"device", {"cpu", "cuda"}},
        {"comm", {"mpi", "nccl"}},
        {attr::layout, {"contiguous", "zigzag", "striped", "balanced"}},
        {"pass", {"fwd", "fwd+bwd"}},
        {attr::seq_rule, {"memory", "work"}},
        {"scaling", {"strong", "weak"}},
        {attr::dp_variant, {"ddp", "zero1", "fsdp"}},
        {attr::cp_variant, {"ring", "allgather", "ulysses", "hybrid"}},
        {"sparse_pattern", {"random", "local_global"}},
        {attr::dtype, dtypes::spellings()}}; // the dtype table's spellings (dtype_names.hpp)
    const auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
}

bool readable(const std::string& schema) {
    return schema == version || schema == version_1;
}

const std::vector<std::string>& training_memory_datasets() {
    static const std::vector<std::string> names = {ds_param_bytes,       ds_grad_bytes,
                                                   ds_optimizer_bytes,   ds_activation_bytes,
                                                   ds_comm_buffer_bytes, ds_step_peak_device_bytes};
    return names;
}

const std::vector<std::string>& machine_datasets() {
    using namespace machine_ds;
    static const std::vector<std::string> names = {
        foreign_load, load_resolution,  load_cores,   own_threads,
        steal,        iowait,           run_wait,     nivcsw,
        cpu_mhz,      gpu_sm_clock_mhz, gpu_throttle, gpu_other_processes};
    return names;
}

} // namespace ringscale::schema
