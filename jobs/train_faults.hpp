// Planted defects of the training step: fault-injection hooks in the real code
// paths, so `ringscale-stats numerics` is shown to flag the bugs distributed training is known
// for. Compiled in only with RINGSCALE_FAULT_HOOKS (jobs/CMakeLists.txt: the test build,
// BUILD_TESTING on); otherwise active_faults() is a constant with every fault off and no
// hook's code remains. The defects:
//  - cp_label_shift: at each context-parallel shard boundary (the last token of a rank's chunk)
//    the label is the token two ahead instead of one (a label rolled across the boundary,
//    verl #4250);
//  - local_loss: the loss normalised by the rank's own tokens instead of the global batch's
//    (Megatron-LM #673, verl #6609);
//  - skip_bucket_allreduce: DDP's first gradient bucket (the head's) is not all-reduced; the
//    optimizer takes the rank's own partial gradient.
// Each is a no-op where its feature is (one cp rank, one rank).
#pragma once

namespace ringscale::jobs {

struct train_faults {
    bool cp_label_shift = false;
    bool local_loss = false;
    bool skip_bucket_allreduce = false;
};

#if RINGSCALE_FAULT_HOOKS
/// The faults in force (all off until set_faults). Not thread safe; tests set them between
/// cases on every rank alike.
const train_faults& active_faults();
void set_faults(const train_faults& f);
#else
inline constexpr train_faults active_faults() {
    return {};
}
#endif

} // namespace ringscale::jobs
