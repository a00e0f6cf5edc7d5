#include "jobs/train_faults.hpp"

#if RINGSCALE_FAULT_HOOKS
namespace ringscale::jobs {

namespace {
train_faults g_faults;
} // namespace

const train_faults& active_faults() {
    return g_faults;
}

void set_faults(const train_faults& f) {
    g_faults = f;
}

} // namespace ringscale::jobs
#endif
