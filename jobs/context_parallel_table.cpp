// The closing comparison of a launch's context-parallel schemes (attention_comparison_table,
// declared in attention_common.hpp): ring_attention and context_parallel cases grouped by
// problem and rank count, so a user sees side by side why one scheme wins.
#include "jobs/attention_common.hpp"
#include "src/base/parse.hpp"

#include <fmt/format.h>

namespace ringscale::jobs {

namespace {

bool compared(const case_summary& s) {
    const auto& job = s.plan->job;
    auto status = s.attrs.find("status");
    const bool ok = status == s.attrs.end() ||
                    std::get_if<std::string>(&status->second) == nullptr ||
                    std::get<std::string>(status->second) == "ok";
    return (job == "ring_attention" || job == "context_parallel") && ok && s.median_time_s > 0;
}

// Cases compared with each other: the same problem on the same number of ranks.
std::string group_key(const case_summary& s) {
    const auto pr = read_attention_problem(s.plan->values);
    return fmt::format("{:>8} {:>5} {:>7} {:>6} {:>7} {:>4} {:>3}", format_size(pr.seq_len),
                       s.world_size, pr.backward ? "fwd+bwd" : "fwd", pr.causal ? "yes" : "no",
                       fmt::format("{}/{}", pr.heads, pr.kv_heads), pr.head_dim, pr.batch);
}

std::string scheme_of(const case_summary& s) {
    const auto& v = s.plan->values;
    if (s.plan->job == "ring_attention" && v.has("overlap") && !v.flag("overlap"))
        return s.plan->variant + "/no-ovl";
    return s.plan->variant;
}

std::string row_text(const std::string& key, const case_summary& s, bool fastest) {
    const double t = s.median_time_s;
    const double gf = attr_number(s.attrs, "flops_per_iter") / t / s.world_size / 1e9;
    return fmt::format(
        "{} {:>12} {:>10} {:>9} {:>9.2f} {:>5.0f} {:>10} {:>10}{}\n", key, scheme_of(s),
        s.plan->values.text("layout"), format_seconds(t), gf, 100.0 * s.median_comm_wait_s / t,
        format_bytes(attr_number(s.attrs, "comm_bytes_per_iter")),
        format_bytes(static_cast<double>(s.peak_host_bytes)), fastest ? "  <- fastest" : "");
}

} // namespace

std::string attention_comparison_table(const std::vector<case_summary>& cases) {
    std::vector<std::string> keys;
    std::vector<std::vector<const case_summary*>> groups;
    bool any_cp = false;
    for (const auto& s : cases) {
        if (!s.plan || !compared(s))
            continue;
        any_cp = any_cp || s.plan->job == "context_parallel";
        const std::string key = group_key(s);
        std::size_t g = 0;
        while (g < keys.size() && keys[g] != key)
            ++g;
        if (g == keys.size()) {
            keys.push_back(key);
            groups.emplace_back();
        }
        groups[g].push_back(&s);
    }
    if (!any_cp)
        return {};
    std::string out =
        "#\n# comparison of context-parallel schemes (time: median of the slowest rank; comm%: "
        "time blocked on communication;\n# sent: bytes sent per rank per iteration; peak: "
        "tracked host memory of the largest rank)\n";
    out += fmt::format("#{:>7} {:>5} {:>7} {:>6} {:>7} {:>4} {:>3} {:>12} {:>10} {:>9} {:>9} "
                       "{:>5} {:>10} {:>10}\n",
                       "seq", "ranks", "pass", "causal", "H/Hkv", "D", "B", "scheme", "layout",
                       "time", "GF/s/rank", "comm%", "sent/rank", "peak/rank");
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const case_summary* best = groups[g].front();
        for (const auto* s : groups[g])
            if (s->median_time_s < best->median_time_s)
                best = s;
        for (const auto* s : groups[g])
            out += row_text(keys[g], *s, groups[g].size() > 1 && s == best);
    }
    return out;
}

} // namespace ringscale::jobs
