#include "kernels/dev_buffer.hpp"

#include "src/base/error.hpp"

#include <fmt/format.h>

namespace ringscale::kernels {

void throw_dev_buffer_overflow(std::size_t count, std::size_t size) {
    throw config_error(
        fmt::format("dev_buffer: a copy of {} elements exceeds its {} elements", count, size));
}

dev_positions::dev_positions(executor& exec, std::vector<std::int64_t> host)
    : m_host(std::move(host)), m_dev(exec, m_host) {
    m_contiguous = true;
    for (std::size_t i = 1; i < m_host.size(); ++i)
        m_contiguous = m_contiguous && m_host[i] == m_host[0] + static_cast<std::int64_t>(i);
}

row_positions dev_positions::view() const {
    return {m_host.data(), m_dev.data(), static_cast<std::int64_t>(m_host.size()), m_contiguous};
}

} // namespace ringscale::kernels
