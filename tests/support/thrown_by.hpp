// The message a call throws, for tests of one-line refusals.
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace ringscale::testing_support {

/// What `f` throws (a std::exception's what()), or "" when it returns.
inline std::string thrown_by(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

} // namespace ringscale::testing_support
