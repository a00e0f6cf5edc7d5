// A planted defect in the training step's own GEMM, compiled into test executables only (the
// definition RINGSCALE_PLANTED_GEMM_DEFECT, set by tests/jobs/CMakeLists.txt on the test that
// links it; no library or program of the product has it): a bf16 GEMM whose accumulator is
// rounded to bf16 at every 64-wide k-block boundary of its reduction (the partial sum carried
// from one block to the next in bf16, as a kernel that spills it between k-tiles would; the
// last block's sum is written in fp32), in the forward (K = in), the input gradient (K = out)
// and the weight gradient (K = tokens). A reduction of at most 64 is exact as before. Installed, it
// replaces every bf16 GEMM of every CPU training context: the run, its same-dtype reference and the
// floor alike, so only the fp64 reference is free of it. Other dtypes keep the context's own GEMMs.
#pragma once

#include "kernels/model/train_context.hpp"

#include <cstddef>
#include <vector>

namespace ringscale::test {

class planted_gemm_defect final : public kernels::model::cpu_gemm_override {
  public:
    /// The reduction's block width between two roundings of the accumulator.
    static constexpr std::size_t block = 64;
    bool fwd(kernels::model::train_dtype t, const kernels::linear_shape& s, const float* x,
             const float* w, const float* b, float* y) override;
    bool bwd(kernels::model::train_dtype t, const kernels::linear_shape& s, const float* x,
             const float* w, const float* dy, float* dx, float* dw, float* db) override;

  private:
    std::vector<float> m_a, m_b, m_part, m_acc;
};

/// Installs a planted_gemm_defect for its lifetime (set_cpu_gemm_override), then none.
class planted_gemm_scope {
  public:
    planted_gemm_scope() { kernels::model::set_cpu_gemm_override(&m_defect); }
    ~planted_gemm_scope() { kernels::model::set_cpu_gemm_override(nullptr); }
    planted_gemm_scope(const planted_gemm_scope&) = delete;
    planted_gemm_scope& operator=(const planted_gemm_scope&) = delete;

  private:
    planted_gemm_defect m_defect;
};

} // namespace ringscale::test
