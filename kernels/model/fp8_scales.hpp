// The per-tensor scales of fp8 GEMMs (TransformerEngine's recipe), as host bookkeeping shared
// by every backend: the CPU emulation (kernels/model/mixed_precision) and the GPU's fp8 GEMMs
// (kernels/cuda/cublaslt_gemm, whose scales are explicit operands) read the same scale for the
// same (GEMM site, operand) from the same amaxes.
//  - Slots: a GEMM site (block l's QKV, out, MLP up, MLP down as 4l..4l+3, the logits as 4L)
//    has three operands, x and w in E4M3 and dy in E5M2: slot 3·site + operand.
//  - current scaling: s = fp8_max / amax of the tensor itself.
//  - delayed scaling: s = fp8_max / max of the amax history, the last `history` steps'
//    amaxes (reduced over the ranks at the end of each step); 1 before any history.
//  - An amax of 0, inf or NaN keeps the scale 1 (TE's margin 0, no overflow guard beyond it).
// A value x is then stored as round_fp8(s·x) and read as that / s. Not thread safe.
#pragma once

#include "kernels/elem.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace ringscale::kernels::model {

/// fp8 per-tensor scaling: delayed (from the amax history) or current (from the tensor).
enum class fp8_scaling { delayed, current };

/// A GEMM operand: its input activation, its weight, or its output gradient.
enum class gemm_operand { x, w, dy };

/// The fp8 format of an operand: E5M2 for output gradients, E4M3 otherwise.
inline fp8_format fp8_format_of(gemm_operand op) {
    return op == gemm_operand::dy ? fp8_format::e5m2 : fp8_format::e4m3;
}

/// The scale s = fp8_max(f) / amax, or 1 when amax is 0 or not finite. Pure.
float fp8_scale_from_amax(float amax, fp8_format f);

class fp8_scales {
  public:
    /// `sites` GEMM sites, `scaling` as the recipe, `history` steps of amax kept (>= 1).
    /// Clears every amax. config_error for a history below 1.
    void configure(std::size_t sites, fp8_scaling scaling, int history);
    std::size_t slots() const { return m_step.size(); }
    /// Slot of (site, op); std::logic_error when the site is out of range.
    std::size_t slot(int site, gemm_operand op) const;
    /// Record this step's amax of a tensor at `slot` (the max over the step's calls).
    void record(std::size_t slot, float amax);
    /// The scale a tensor at `slot` whose own amax is `amax_now` is quantised with:
    /// current scaling from amax_now, delayed from the history (amax_now unused).
    float scale(std::size_t slot, float amax_now, fp8_format f) const;
    /// End of a training step (delayed scaling): `reduce` (when set) makes the step's amaxes
    /// [slots()] the max over every rank (collective inside); they join the history, the
    /// oldest step beyond `history` leaves it, and the step's amaxes are cleared. Nothing
    /// for current scaling.
    void end_step(const std::function<void(float* amax, std::size_t n)>& reduce);
    /// The step's amaxes so far [slots()] (what end_step reduces).
    const std::vector<float>& step_amax() const { return m_step; }

  private:
    fp8_scaling m_scaling = fp8_scaling::delayed;
    std::size_t m_history_len = 1;
    std::vector<float> m_step;                 ///< [slots], this step's
    std::vector<std::vector<float>> m_history; ///< per step, oldest first
    std::vector<float> m_history_max;          ///< [slots], max over m_history
};

} // namespace ringscale::kernels::model
