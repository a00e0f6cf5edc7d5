// When a case or a launch is marked (src/base/machine_marks.hpp): each rule at its threshold,
// the checks of hostile or contradictory fields, and the sentinel's verdict, exactly.
#include "src/base/machine_marks.hpp"
#include "src/base/results_schema.hpp"

#include <gtest/gtest.h>
#include <limits>

using namespace ringscale::machine;
namespace ds = ringscale::schema::machine_ds;

namespace {

const double nan = std::numeric_limits<double>::quiet_NaN();

// Two ranks on one 2-core machine, 2 threads of the launch, nothing else running.
machine_fields quiet() {
    return {{ds::foreign_load, {0.02, 0.03}},
            {ds::load_resolution, {0.05, 0.05}},
            {ds::load_cores, {2, 2}},
            {ds::own_threads, {2, 2}},
            {ds::steal, {0, 0}},
            {ds::iowait, {0.01, 0}},
            {ds::run_wait, {0.01, 0.02}},
            {ds::nivcsw, {3, 4}},
            {ds::cpu_mhz, {nan, nan}}};
}

probe at(int before, double compute_s, double allreduce_s = nan) {
    probe p;
    p.before_case = before;
    p.compute_s = compute_s;
    p.allreduce_s = allreduce_s;
    p.machine = quiet();
    return p;
}

} // namespace

TEST(machine_marks, quiet_and_unknown_are_not_marked) {
    EXPECT_EQ(contention_reason(quiet()), "");
    EXPECT_EQ(contention_reason({}), "");
    EXPECT_EQ(contention_reason({{ds::foreign_load, {nan, nan}}}), "");
}

TEST(machine_marks, foreign_load_beyond_its_resolution) {
    auto m = quiet();
    m[ds::foreign_load] = {0.02, 0.31};
    EXPECT_EQ(contention_reason(m),
              "other processes used 0.31 of the 2 core(s) the ranks may use (+-0.05)");
    m[ds::load_resolution] = {0.05, 0.07}; // 0.31 - 0.07 < 0.25: within what ticks can tell
    EXPECT_EQ(contention_reason(m), "");
}

// run_wait sums the seconds of every thread of the rank: six threads spinning beside a busy
// loop waited 6.38 s per second of the case, once read as "6.38 of the time".
TEST(machine_marks, a_wait_above_one_second_per_second_reads_as_seconds_per_second) {
    auto m = quiet();
    m[ds::run_wait] = {6.38, 0.1};
    const std::string why = contention_reason(m);
    EXPECT_EQ(why, "a rank's threads waited for a core 6.38 s per second (summed over its "
                   "threads) while its launch's 2 thread(s) fit the 2 core(s)");
    EXPECT_EQ(why.find("of the time"), std::string::npos);
    const std::vector<mark_effect> e = machine_effects(m);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].reason,
              "a rank's threads waited for a core 6.38 s per second (summed over its threads)");
    // The slowdown it may explain stays a finite factor above 1, however long the wait.
    EXPECT_LT(e[0].hi, std::numeric_limits<double>::infinity());
    EXPECT_GE(e[0].lo, 1.0);
    EXPECT_GE(e[0].hi, e[0].lo);
    EXPECT_EQ(run_wait_text(0.25),
              "a rank's threads waited for a core 0.25 s per second (summed over its threads)");
}

TEST(machine_marks, waiting_for_a_core_counts_only_when_the_launch_fits) {
    auto m = quiet();
    m[ds::run_wait] = {0.4, 0.1};
    EXPECT_EQ(contention_reason(m),
              "a rank's threads waited for a core 0.40 s per second (summed over its threads) "
              "while its launch's 2 thread(s) fit the 2 core(s)");
    // Oversubscribed by the launch itself: marked as such, whatever else waited.
    m[ds::own_threads] = {4, 4};
    EXPECT_EQ(contention_reason(m), "oversubscribed: 4 threads on 2 cores");
}

TEST(machine_marks, oversubscription_counts_the_cores_the_ranks_may_use_together) {
    // taskset -c 0 mpirun -np 2: two 1-thread ranks whose union of cores is one core.
    auto m = quiet();
    m[ds::load_cores] = {1, 1};
    EXPECT_EQ(contention_reason(m), "oversubscribed: 2 threads on 1 core");
    m[ds::own_threads] = {1, 1};
    EXPECT_EQ(contention_reason(m), "");
}

TEST(machine_marks, steal_and_the_gpu) {
    auto m = quiet();
    m[ds::steal] = {0.06, 0};
    EXPECT_EQ(contention_reason(m), "the hypervisor stole 6% of the cores' time");
    m = quiet();
    m[ds::gpu_other_processes] = {0, 2};
    EXPECT_EQ(contention_reason(m), "2 other process(es) on the GPU");
    m = quiet();
    m[ds::gpu_throttle] = {4, 0}; // power cap alone: a GPU at its limit, not a mark
    EXPECT_EQ(contention_reason(m), "");
    m[ds::gpu_throttle] = {4 | 0x20, 0};
    EXPECT_EQ(contention_reason(m), "the GPU slowed its clocks (NVML throttle reasons 0x24: "
                                    "thermal or hardware slowdown)");
}

TEST(machine_marks, the_worst_rank_names_the_reason) {
    auto m = quiet();
    m[ds::foreign_load] = {0.5, 1.5};
    EXPECT_EQ(contention_reason(m),
              "other processes used 1.50 of the 2 core(s) the ranks may use (+-0.05)");
}

TEST(machine_marks, hostile_and_contradictory_fields) {
    EXPECT_EQ(machine_fields_problem(quiet(), 2), "");
    auto m = quiet();
    m[ds::steal] = {2, 0};
    EXPECT_EQ(machine_fields_problem(m, 2), "machine/steal [rank 0] is 2: it must be in [0, 1]");
    m = quiet();
    m[ds::nivcsw] = {1.5, 0};
    EXPECT_EQ(machine_fields_problem(m, 2),
              "machine/nivcsw [rank 0] is 1.5: it must be a whole number in [0, 1e+15]");
    // NaN where the launcher always measures: refused as inf is; where it may not know, kept.
    for (const char* always : {ds::own_threads, ds::nivcsw}) {
        m = quiet();
        m[always] = {nan, 1};
        EXPECT_EQ(machine_fields_problem(m, 2),
                  std::string("machine/") + always +
                      " [rank 0] is NaN: the launcher always measures it");
        m[always] = {std::numeric_limits<double>::infinity(), 1};
        EXPECT_NE(machine_fields_problem(m, 2), "");
    }
    m = quiet();
    m[ds::cpu_mhz] = {nan, nan}; // no cpufreq: not known
    EXPECT_EQ(machine_fields_problem(m, 2), "");
    m = quiet();
    m[ds::load_cores] = {2};
    EXPECT_EQ(machine_fields_problem(m, 2), "machine/load_cores has 1 values for 2 ranks");
    m = quiet();
    m[ds::foreign_load] = {0, 9};
    EXPECT_EQ(machine_fields_problem(m, 2), "machine/foreign_load [rank 1] is 9 on 2 core(s): "
                                            "more than the cores can run");
    m = quiet();
    m[ds::steal] = {0.6, 0};
    m[ds::iowait] = {0.5, 0};
    EXPECT_EQ(machine_fields_problem(m, 2), "machine/steal and iowait [rank 0] add up to 1.1 of "
                                            "the cores' time: more than all of it");
    m = quiet();
    m[ds::foreign_load] = {std::numeric_limits<double>::infinity(), 0};
    EXPECT_NE(machine_fields_problem(m, 2), "");
}

TEST(machine_marks, a_clean_launch_does_not_drift) {
    const drift_verdict v = judge_drift({at(0, 1e-3, 1e-4), at(3, 1.1e-3, 1.5e-4), at(6, 1e-3)}, 6);
    EXPECT_FALSE(v.drifted);
    EXPECT_EQ(v.reason, "");
    EXPECT_EQ(v.case_reason, std::vector<std::string>(6, ""));
}

TEST(machine_marks, a_slow_probe_marks_the_cases_around_it) {
    // Probes before cases 0, 2, 4 and at the end (6); the one before case 4 is 1.5x slower,
    // and the one after it agrees (1.45x).
    const drift_verdict v =
        judge_drift({at(0, 1e-3), at(2, 1e-3), at(4, 1.5e-3), at(6, 1.45e-3)}, 6);
    EXPECT_TRUE(v.drifted);
    EXPECT_EQ(v.reason, "the sentinel's compute probe before case 4 took 1.50x the launch's "
                        "fastest (tolerance 1.25x)");
    const std::vector<std::string> marked = {"", "", v.reason, v.reason, v.reason, v.reason};
    EXPECT_EQ(v.case_reason, marked);
}

TEST(machine_marks, allreduce_drift_and_contended_probes) {
    drift_verdict v = judge_drift(
        {at(0, 1e-3, 1e-4), at(1, 1e-3, 1.05e-4), at(3, 1e-3, 2.5e-4), at(3, 1e-3, 2.4e-4)}, 3);
    EXPECT_TRUE(v.drifted);
    EXPECT_EQ(v.reason, "the sentinel's allreduce probe before case 3 took 2.50x the launch's "
                        "fastest (tolerance 2.00x)");
    // A probe measured under contention is explained by it (its cases carry their own mark):
    // it neither drifts nor sets the reference.
    probe loaded = at(3, 3e-3);
    loaded.machine[ds::foreign_load] = {1.0, 1.0};
    v = judge_drift({at(0, 1e-3), loaded}, 3);
    EXPECT_FALSE(v.drifted);
}

TEST(machine_marks, a_lone_fast_probe_is_not_the_reference) {
    // The allreduce probes of a link test on the emulated cluster (2 nodes x 1 rank at
    // 300 Mbit/s, ms): the second rode the shaped link's burst credit, the eleven others agree.
    // Judged against the lone fast one, all eleven "drifted" and the calibration lost the
    // launch; the reference is the fastest time two probes agree on.
    const std::vector<double> ms = {1.81, 0.69, 1.77, 1.79, 1.78, 1.76,
                                    1.81, 1.81, 1.80, 1.81, 1.80, 1.81};
    std::vector<probe> probes;
    for (std::size_t i = 0; i < ms.size(); ++i)
        probes.push_back(at(static_cast<int>(3 * i), 1e-3, ms[i] * 1e-3));
    const drift_verdict v = judge_drift(probes, static_cast<int>(3 * ms.size()));
    EXPECT_FALSE(v.drifted) << v.reason;
    EXPECT_DOUBLE_EQ(drift_reference({1.81, 0.69, 1.77, 1.76}), 1.76);
    EXPECT_DOUBLE_EQ(drift_reference({1.0, 2.5}), 1.0); // no two agree: the fastest
    EXPECT_DOUBLE_EQ(drift_reference({1.0, 1.05, 1.5}), 1.0);
    EXPECT_EQ(drift_reference({}), std::numeric_limits<double>::infinity());
    // A slow state held by several probes still drifts against a fast one held by two.
    probes = {at(0, 1e-3), at(2, 1.02e-3), at(4, 1.6e-3), at(6, 1.6e-3), at(8, 1.61e-3)};
    EXPECT_TRUE(judge_drift(probes, 8).drifted);
}

TEST(machine_marks, hostile_probes) {
    EXPECT_EQ(probes_problem({at(0, 1e-3), at(2, 1e-3)}, 2), "");
    EXPECT_EQ(probes_problem({at(0, 1e-3), at(3, 1e-3)}, 2),
              "sentinel probe 1 says it ran before case 3: probes run in order, between cases 0 "
              "and 2");
    EXPECT_EQ(probes_problem({at(2, 1e-3), at(1, 1e-3)}, 2),
              "sentinel probe 1 says it ran before case 1: probes run in order, between cases 0 "
              "and 2");
    EXPECT_EQ(probes_problem({at(0, -1)}, 2),
              "sentinel probe 0 has compute_s -1: a probe time is finite and > 0");
    EXPECT_EQ(probes_problem({at(0, 1e-3, 0)}, 2),
              "sentinel probe 0 has allreduce_s 0: a probe time is finite and > 0");
}

TEST(machine_marks, a_lone_slow_probe_needs_twice_the_tolerance) {
    // A short launch's cold first probe at 1.87x: alone, within 2 x 1.25x.
    drift_verdict v = judge_drift({at(0, 1.87e-3), at(1, 1e-3), at(2, 1.02e-3)}, 2);
    EXPECT_FALSE(v.drifted) << v.reason;
    EXPECT_EQ(v.case_effect, std::vector<mark_effect>(2));
    v = judge_drift({at(0, 2.6e-3), at(1, 1e-3), at(2, 1.02e-3)}, 2);
    EXPECT_TRUE(v.drifted);
    EXPECT_EQ(v.reason, "the sentinel's compute probe before case 0 took 2.60x the launch's "
                        "fastest (tolerance 2.50x, a lone probe)");
    EXPECT_EQ(v.case_reason, (std::vector<std::string>{v.reason, ""}));
}

TEST(machine_marks, drift_effects_per_case) {
    const drift_verdict v =
        judge_drift({at(0, 1e-3), at(1, 1.02e-3), at(2, 1.4e-3), at(4, 1.4e-3)}, 4);
    ASSERT_TRUE(v.drifted);
    ASSERT_EQ(v.case_effect.size(), 4u);
    // Cases 1-3, around the two slow probes (x1.40 on compute); case 0 is not marked.
    EXPECT_EQ(v.case_effect[0], mark_effect{});
    const mark_effect& e = v.case_effect[1];
    EXPECT_EQ(e.phase, mark_phase::compute);
    EXPECT_DOUBLE_EQ(e.factor, 1.4);
    EXPECT_DOUBLE_EQ(e.lo, 1.4 / 1.1);
    EXPECT_DOUBLE_EQ(e.hi, 1.4 * 1.1);
    // An allreduce drift alone touches communication.
    const drift_verdict a = judge_drift(
        {at(0, 1e-3, 1e-4), at(1, 1e-3, 1e-4), at(2, 1e-3, 3e-4), at(4, 1e-3, 3e-4)}, 4);
    ASSERT_TRUE(a.drifted);
    EXPECT_EQ(a.case_effect[3].phase, mark_phase::communication);
    EXPECT_DOUBLE_EQ(a.case_effect[3].factor, 3.0);
    EXPECT_EQ(effect_text(a.case_effect[3]), "x3.00 [2.73, 3.30] on communication");
}

TEST(machine_marks, effects_of_the_machine_fields) {
    EXPECT_TRUE(machine_effects(quiet()).empty());
    EXPECT_TRUE(machine_effects({}).empty());
    auto m = quiet();
    m[ds::load_cores] = {1, 1}; // 2 threads on 1 core
    auto e = machine_effects(m);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].reason, "oversubscribed: 2 threads on 1 core");
    EXPECT_EQ(e[0].phase, mark_phase::compute);
    EXPECT_DOUBLE_EQ(e[0].lo, 1);
    EXPECT_DOUBLE_EQ(e[0].factor, 2);
    EXPECT_DOUBLE_EQ(e[0].hi, 2);
    m = quiet();
    m[ds::foreign_load] = {0.02, 0.45}; // (2 + 0.45) / 2, (2 + 0.40) / 2, 1 + 0.50 / 2
    e = machine_effects(m);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_DOUBLE_EQ(e[0].factor, 1.225);
    EXPECT_DOUBLE_EQ(e[0].lo, 1.2);
    EXPECT_DOUBLE_EQ(e[0].hi, 1.25);
    EXPECT_EQ(e[0].reason, "other processes used 0.45 of the 2 core(s) the ranks may use");
    m = quiet();
    m[ds::run_wait] = {0.4, 0.1}; // 1 / (1 - 0.4) as one thread; 1 / (1 - 0.4 / 2) spread
    e = machine_effects(m);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_DOUBLE_EQ(e[0].factor, 1 / 0.6);
    EXPECT_DOUBLE_EQ(e[0].hi, 1 / 0.6);
    EXPECT_DOUBLE_EQ(e[0].lo, 1.25);
    m = quiet();
    m[ds::steal] = {0, 0.1};
    e = machine_effects(m);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_DOUBLE_EQ(e[0].lo, 1);
    EXPECT_DOUBLE_EQ(e[0].factor, 1 / 0.9);
    EXPECT_DOUBLE_EQ(e[0].hi, 1.25);
    m[ds::gpu_throttle] = {0x20, 0};
    e = machine_effects(m);
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[1].reason, "the GPU slowed its clocks");
    EXPECT_EQ(e[1].hi, std::numeric_limits<double>::infinity());
    EXPECT_EQ(effect_text(e[1]), "x2.00 [1.00, unbounded] on compute");
}

TEST(machine_marks, an_effect_on_the_whole_time) {
    mark_effect c;
    c.factor = 2;
    c.lo = 1;
    c.hi = 2;
    const mark_effect w = on_whole_time(c, 0.25); // compute is a quarter of the time
    EXPECT_DOUBLE_EQ(w.factor, 1.25);
    EXPECT_DOUBLE_EQ(w.lo, 1);
    EXPECT_DOUBLE_EQ(w.hi, 1.25);
    EXPECT_DOUBLE_EQ(on_whole_time(c, nan).hi, 2); // share unknown: all of it
    mark_effect k = c;
    k.phase = mark_phase::communication;
    k.hi = 3;
    EXPECT_DOUBLE_EQ(on_whole_time(k, 0.25).hi, 2.5);
    EXPECT_DOUBLE_EQ(on_whole_time(k, 1.0).hi, 1);
    EXPECT_DOUBLE_EQ(largest_effect({c, k}, 0.9), 1.9);
    EXPECT_DOUBLE_EQ(largest_effect({c, k}, 0.25), 2.5);
    EXPECT_DOUBLE_EQ(largest_effect({}, 0.5), 1);
}
