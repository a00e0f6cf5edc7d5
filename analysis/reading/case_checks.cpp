#include "case_checks.hpp"

#include "src/base/results_schema.hpp"

#include <cmath>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

/// A sample count's problem: a whole number from 1 (0 for keys) to 65536, at most `seq_len`.
std::string sample_problem(const case_data& c, const char* name, double lowest) {
    const auto v = c.number(name);
    if (!v)
        return c.attrs.count(name) ? fmt::format("{} is not a number", name) : "";
    const double seq = c.number(schema::attr::seq_len).value_or(65536);
    if (!(*v >= lowest && *v <= 65536 && *v <= std::max(seq, lowest) && std::floor(*v) == *v))
        return fmt::format("{} = {} is not a sample size", name, c.text(name));
    return "";
}

/// The problem of one tensor's max and RMS of `who` ("" or "single_").
std::string tensor_problem(const case_data& c, const std::string& who, const std::string& t) {
    const std::string mx = schema::acc_attr(who, t, "max_rel"),
                      rms = schema::acc_attr(who, t, "rms_rel");
    const bool has_max = c.attrs.count(mx) > 0, has_rms = c.attrs.count(rms) > 0;
    if (has_max != has_rms)
        return fmt::format("{} without {}", has_max ? mx : rms, has_max ? rms : mx);
    if (!has_max)
        return "";
    // A non-finite error is a result (the tensor overflowed), kept for the view to flag.
    for (const std::string& name : {mx, rms}) {
        const auto v = c.number(name);
        if (!v || (std::isfinite(*v) && *v < 0))
            return fmt::format("{} = {} is not an error (a number >= 0, or inf/NaN for an "
                               "overflow)",
                               name, c.text(name));
    }
    if (std::isfinite(*c.number(rms)) && std::isfinite(*c.number(mx)) &&
        *c.number(rms) > *c.number(mx))
        return fmt::format("{} = {} exceeds {} = {}", rms, c.text(rms), mx, c.text(mx));
    if (who == "single_" && !c.attrs.count(schema::acc_attr("", t, "max_rel")))
        return fmt::format("{} without the distributed {}", mx, schema::acc_attr("", t, "max_rel"));
    return "";
}

} // namespace

std::string accuracy_problem(const case_data& c) {
    bool any = false;
    for (const auto& [name, value] : c.attrs)
        any = any || starts_with(name, schema::attr::acc_prefix);
    if (!any)
        return "";
    for (const std::string t : schema::acc_tensors)
        for (const char* who : {"", "single_"})
            if (std::string p = tensor_problem(c, who, t); !p.empty())
                return p;
    if (std::string p = sample_problem(c, schema::attr::acc_query_rows, 1); !p.empty())
        return p;
    if (std::string p = sample_problem(c, schema::attr::acc_key_rows, 0); !p.empty())
        return p;
    const bool keys = c.number(schema::attr::acc_key_rows).value_or(0) > 0;
    for (const char* t : {"dk", "dv"})
        if (!keys && c.attrs.count(schema::acc_attr("", t, "max_rel")))
            return fmt::format("{} without sampled keys ({} = {})",
                               schema::acc_attr("", t, "max_rel"), schema::attr::acc_key_rows,
                               c.text(schema::attr::acc_key_rows, "absent"));
    if (c.attrs.count(schema::attr::acc_reference_s)) {
        const auto s = c.number(schema::attr::acc_reference_s);
        if (!s || !std::isfinite(*s) || *s < 0)
            return fmt::format("{} = {} is not a time", schema::attr::acc_reference_s,
                               c.text(schema::attr::acc_reference_s));
    }
    return "";
}

std::string drop_untrusted_accuracy(case_data& c) {
    std::string why = accuracy_problem(c);
    if (why.empty())
        return why;
    for (auto it = c.attrs.begin(); it != c.attrs.end();)
        it = starts_with(it->first, schema::attr::acc_prefix) ? c.attrs.erase(it) : std::next(it);
    return why;
}

std::string timing_problem(const case_data& c) {
    stored::attr_map attrs = c.attrs;
    if (c.world_size != 0)
        attrs[schema::attr::world_size] =
            attr_value{std::to_string(c.world_size), c.world_size, true};
    return stored::data_problem(c, attrs, true);
}

std::vector<std::uint8_t> warmup_from_attribute(const case_data& c) {
    return stored::warmup_from_attribute(c.rows, c.attrs);
}

} // namespace ringscale::analysis
