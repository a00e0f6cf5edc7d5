#include "kernels/model/fp8_scales.hpp"

#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ringscale::kernels::model {

float fp8_scale_from_amax(float amax, fp8_format f) {
    // TE: scale = fp8_max / amax (margin 0); an all-zero tensor or no history keeps 1.
    return amax > 0 && std::isfinite(amax) ? fp8_max(f) / amax : 1.0f;
}

void fp8_scales::configure(std::size_t sites, fp8_scaling scaling, int history) {
    if (history < 1)
        throw config_error("fp8 scaling: the amax history must be at least 1 step");
    m_scaling = scaling;
    m_history_len = static_cast<std::size_t>(history);
    m_step.assign(sites * 3, 0.0f);
    m_history.clear();
    m_history_max.assign(sites * 3, 0.0f);
}

std::size_t fp8_scales::slot(int site, gemm_operand op) const {
    const auto s = static_cast<std::size_t>(site) * 3 + static_cast<std::size_t>(op);
    if (site < 0 || s >= m_step.size())
        throw std::logic_error("fp8_scales: GEMM site out of range");
    return s;
}

void fp8_scales::record(std::size_t slot, float amax) {
    m_step.at(slot) = std::max(m_step.at(slot), amax);
}

float fp8_scales::scale(std::size_t slot, float amax_now, fp8_format f) const {
    return fp8_scale_from_amax(
        m_scaling == fp8_scaling::current ? amax_now : m_history_max.at(slot), f);
}

void fp8_scales::end_step(const std::function<void(float*, std::size_t)>& reduce) {
    if (m_scaling != fp8_scaling::delayed)
        return;
    if (reduce)
        reduce(m_step.data(), m_step.size());
    m_history.push_back(m_step);
    if (m_history.size() > m_history_len)
        m_history.erase(m_history.begin());
    std::fill(m_history_max.begin(), m_history_max.end(), 0.0f);
    for (const auto& h : m_history)
        for (std::size_t i = 0; i < h.size(); ++i)
            m_history_max[i] = std::max(m_history_max[i], h[i]);
    std::fill(m_step.begin(), m_step.end(), 0.0f);
}

} // namespace ringscale::kernels::model
