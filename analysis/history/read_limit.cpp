#include "read_limit.hpp"

#include "src/base/error.hpp"
#include "src/base/text_escape.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <sys/stat.h>

namespace ringscale::analysis::history {

double read_cpu_limit_s(const std::string& path, double base_s) {
    struct stat st {};
    const double mib = stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) / 1048576 : 0;
    return base_s * (1 + std::min(mib / 5, 86400.0));
}

double read_wall_limit_s(double cpu_s) {
    return 4 * cpu_s + 10;
}

std::string limit_seconds_text(double s) {
    return s >= 10 ? fmt::format("{:.0f}", std::ceil(s)) : fmt::format("{:.3g}", s);
}

double read_limit_from_env() {
    const char* text = std::getenv("RINGSCALE_READ_LIMIT_S");
    if (text == nullptr || *text == '\0')
        return default_read_limit_s;
    const std::string given(text);
    // Digits and one point only: no sign, exponent, hex, "inf", "nan" or spaces.
    const bool plain = given.find_first_not_of("0123456789.") == std::string::npos &&
                       std::count(given.begin(), given.end(), '.') <= 1;
    char* end = nullptr;
    errno = 0;
    const double v = plain ? std::strtod(given.c_str(), &end) : 0;
    if (!plain || errno != 0 || end != given.c_str() + given.size() || !(v >= 0.001) ||
        !(v <= 86400))
        throw config_error(
            fmt::format("RINGSCALE_READ_LIMIT_S='{}': the read limit of a file must be a number "
                        "of seconds from 0.001 to 86400 (default {:g})",
                        terminal_text(given.substr(0, 64)), default_read_limit_s));
    return v;
}

} // namespace ringscale::analysis::history
