#include "results.hpp"

#include "cases.hpp"

#include <algorithm>

namespace ringscale::analysis {

std::optional<double> case_data::number(const std::string& name) const {
    auto it = attrs.find(name);
    if (it == attrs.end())
        return std::nullopt;
    return it->second.number;
}

std::string case_data::text(const std::string& name, const std::string& fallback) const {
    auto it = attrs.find(name);
    return it == attrs.end() ? fallback : it->second.text;
}

std::vector<std::size_t> case_data::measured_rows() const {
    std::vector<std::size_t> out;
    out.reserve(rows);
    for (std::size_t r = 0; r < rows; ++r)
        if (r >= is_warmup.size() || !is_warmup[r])
            out.push_back(r);
    return out;
}

std::optional<double> case_data::max_memory(const std::string& name) const {
    auto it = memory_bytes.find(name);
    if (it == memory_bytes.end() || it->second.empty())
        return std::nullopt;
    return *std::max_element(it->second.begin(), it->second.end());
}

std::string case_data::label() const {
    return case_label(*this, true);
}

std::string case_data::mark() const {
    if (!contention.empty())
        return "contended: " + contention;
    return drift.empty() ? "" : "drift: " + drift;
}

} // namespace ringscale::analysis
