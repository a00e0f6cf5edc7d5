// For the ring collectives' tests: complete requests in flight together by test() alone.
#pragma once

#include "comm/communicator.hpp"

#include <vector>

namespace ringscale::testing_support {

/// test() every request until all are complete, the last posted first in each pass, as a
/// caller testing whatever is pending may; never wait().
inline void complete_by_test_alone(std::vector<comm::request_ptr>& reqs) {
    for (bool all = false; !all;) {
        all = true;
        for (auto r = reqs.rbegin(); r != reqs.rend(); ++r)
            all = (*r)->test() && all;
    }
}

} // namespace ringscale::testing_support
