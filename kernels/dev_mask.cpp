#include "kernels/dev_mask.hpp"

#include <utility>

namespace ringscale::kernels {

dev_mask::dev_mask(executor& exec, std::shared_ptr<const attention_mask> mask)
    : m_mask(std::move(mask)) {
    if (!m_mask || exec.kind() != device_kind::cuda)
        return;
    if (!m_mask->doc_starts().empty())
        m_doc_start = dev_buffer<std::int64_t>(exec, m_mask->doc_starts());
    if (!m_mask->keep().empty())
        m_keep = dev_buffer<std::uint8_t>(exec, m_mask->keep());
}

mask_view dev_mask::view() const {
    if (!m_mask)
        return {};
    mask_view v = m_mask->view();
    v.doc_start_dev = m_doc_start.empty() ? v.doc_start : m_doc_start.data();
    v.keep_dev = m_keep.empty() ? v.keep : m_keep.data();
    return v;
}

} // namespace ringscale::kernels
