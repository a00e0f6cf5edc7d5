// An attention mask's arrays on an executor: the CUDA kernels read the document starts and
// the kept block pairs from device memory (mask_view's doc_start_dev and keep_dev,
// kernels/mask.hpp), so whoever runs a masked case holds a dev_mask beside its positions
// (dev_positions): one upload per mask, freed with it through the executor.
#pragma once

#include "kernels/dev_buffer.hpp"
#include "kernels/mask_spec.hpp"

#include <cstdint>
#include <memory>

namespace ringscale::kernels {

class dev_mask {
  public:
    /// No mask beyond causal.
    dev_mask() = default;
    /// `mask`'s arrays on `exec` (null: no mask). On CUDA the document starts and kept block
    /// pairs are uploaded (blocking); on the CPU the executor's memory is host memory and the
    /// mask's own arrays serve. `exec` must outlive this object; the mask is kept alive.
    dev_mask(executor& exec, std::shared_ptr<const attention_mask> mask);

    /// The view kernels take: the host arrays and their copies on the executor; valid while
    /// this object lives. No rule without a mask.
    mask_view view() const;

  private:
    std::shared_ptr<const attention_mask> m_mask;
    dev_buffer<std::int64_t> m_doc_start;
    dev_buffer<std::uint8_t> m_keep;
};

} // namespace ringscale::kernels
