// The host-side delta of sampled rows (accuracy.hpp): the CPU backend's own computation, so
// the jobs' accuracy measurement reaches no backend folder.
#include "kernels/accuracy.hpp"

#include "kernels/cpu/attention_cpu.hpp"

namespace ringscale::kernels {

void host_attention_delta(const attention_shape& s, const float* o, const float* d_o, float* delta,
                          elem round) {
    cpu::attention_bwd_delta(s, o, d_o, delta, round);
}

} // namespace ringscale::kernels
