// The attention kernel a launch runs on the GPU, shown once: the launch's (/meta attn_kernel
// and attn_kernel_note: which kernel --attn-kernel resolved to, and why, e.g. why auto chose
// sm90) under the opening line, and a case's own where it differs (a masked case that runs
// the sm80 kernels), each (kernel, note) once per launch however many cases share it.
#pragma once

#include <set>
#include <string>
#include <utility>

namespace ringscale {

class attn_kernel_notes {
  public:
    /// "# attention kernel KERNEL: NOTE" (terminal-escaped; without ": NOTE" when the note is
    /// empty) the first time this (kernel, note) is asked for; "" afterwards, and for an
    /// empty kernel (--device cpu, or a case that runs the launch's kernel).
    std::string line(const std::string& kernel, const std::string& note);

  private:
    std::set<std::pair<std::string, std::string>> m_shown;
};

} // namespace ringscale
