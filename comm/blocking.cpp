#include "comm/blocking.hpp"

#include "src/base/clock.hpp"

namespace ringscale::comm {

blocking_state& current_blocking() {
    static blocking_state state;
    return state;
}

blocking_scope::blocking_scope(const char* op) {
    blocking_state& s = current_blocking();
    if (s.op.load(std::memory_order_relaxed) != nullptr)
        return;
    s.since_s.store(now_s(), std::memory_order_relaxed);
    s.op.store(op, std::memory_order_release);
    m_owner = true;
}

blocking_scope::~blocking_scope() {
    if (m_owner)
        current_blocking().op.store(nullptr, std::memory_order_release);
}

} // namespace ringscale::comm
