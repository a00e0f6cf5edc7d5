// The attention kernel lines of a launch (src/launcher/attn_note.hpp).
#include "src/launcher/attn_note.hpp"

#include "src/base/text_escape.hpp"

namespace ringscale {

std::string attn_kernel_notes::line(const std::string& kernel, const std::string& note) {
    if (kernel.empty() || !m_shown.emplace(kernel, note).second)
        return "";
    std::string text = "# attention kernel " + terminal_text(kernel);
    if (!note.empty())
        text += ": " + terminal_text(note);
    return text + "\n";
}

} // namespace ringscale
