#include "src/engine/sentinel.hpp"

#include "kernels/dev_buffer.hpp"
#include "kernels/kernels.hpp"
#include "kernels/threads.hpp"
#include "src/base/clock.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace ringscale {

namespace {

constexpr int probe_runs = 5;                   // median of these, after one untimed run
constexpr std::size_t allreduce_floats = 16384; // 64 KiB

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The GEMM's shape: about 0.5 ms on one CPU core (256^3 x 2 = 34 MFLOP), about 0.3 ms on a
// data-centre GPU (2048^3 x 2 = 17 GFLOP): long enough to time against the 1.25x drift
// tolerance, short beside a case. (384^3 with 7 runs made two probes 4% of a 5 s launch.)
kernels::linear_shape probe_shape(device_kind device) {
    const std::size_t n = device == device_kind::cuda ? 2048 : 256;
    return {n, n, n};
}

// This rank's median GEMM time, s, on one thread: a GEMM split over a rank's threads times
// also how soon its helper threads got a core (on 2 cores, 2-thread probes of one launch
// spread over 0.20-0.41 ms against 0.33-0.49 ms on one thread), which is noise to the drift
// tolerance. A neighbour on the rank's other cores shows in the case's contention instead.
double time_gemm(kernels::executor& dev) {
    const kernels::serial_blas one_thread;
    const kernels::linear_shape s = probe_shape(dev.kind());
    kernels::dev_buffer<float> x(dev, std::vector<float>(s.tokens * s.in, 0.5f));
    kernels::dev_buffer<float> w(dev, std::vector<float>(s.out * s.in, 0.25f));
    kernels::dev_buffer<float> y(dev, s.tokens * s.out);
    kernels::prepare_gemm(dev, kernels::gemm_math::fp32);
    std::vector<double> t;
    for (int i = 0; i <= probe_runs; ++i) {
        dev.synchronize();
        const double start = now_s();
        kernels::linear_fwd(dev, kernels::gemm_math::fp32, s, x.data(), w.data(), nullptr,
                            y.data());
        dev.synchronize();
        if (i > 0) // the first run warms caches and, on a GPU, the library
            t.push_back(now_s() - start);
    }
    return median(t);
}

// The median 64 KiB allreduce on the job's communicator, s (collective).
double time_allreduce(jobs::run_context& ctx) {
    kernels::dev_buffer<float> buf(ctx.dev, std::vector<float>(allreduce_floats, 1.0f));
    std::vector<double> t;
    for (int i = 0; i <= probe_runs; ++i) {
        ctx.control.barrier();
        const double start = now_s();
        ctx.world.allreduce(buf.data(), buf.data(), allreduce_floats, comm::dtype::f32,
                            comm::reduce_op::max);
        ctx.dev.synchronize();
        if (i > 0)
            t.push_back(now_s() - start);
    }
    return median(t);
}

} // namespace

machine::probe run_sentinel_probe(jobs::run_context& ctx, const machine_context& mctx,
                                  int before_case) {
    comm::communicator& control = ctx.control;
    control.barrier();
    const machine_window w = open_window(mctx);
    const double mine = time_gemm(ctx.dev);
    double slowest = mine;
    control.allreduce(&mine, &slowest, 1, comm::dtype::f64, comm::reduce_op::max);
    machine::probe p;
    p.before_case = before_case;
    p.compute_s = slowest;
    p.allreduce_s = std::numeric_limits<double>::quiet_NaN();
    if (control.size() >= 2) {
        const double ar = time_allreduce(ctx);
        double worst = ar;
        control.allreduce(&ar, &worst, 1, comm::dtype::f64, comm::reduce_op::max);
        p.allreduce_s = worst;
    }
    control.barrier();
    p.machine = close_window(control, mctx, w);
    return p;
}

void sentinel_schedule::probe_ran(double probe_s, double now_s) {
    m_probe_total_s += probe_s;
    ++m_probes;
    m_cases_since = 0;
    m_last_probe_end_s = now_s;
    m_now_s = now_s;
}

void sentinel_schedule::case_ended(double now_s) {
    ++m_cases_since;
    m_now_s = now_s;
}

bool sentinel_schedule::due() const {
    if (m_probes == 0) // at start with --sentinel N; in auto once the launch can afford two
        return m_every > 0 || m_factor * 2 * probe_estimate_s <= m_now_s;
    if (m_cases_since == 0)
        return false;
    if (m_every > 0)
        return m_cases_since >= m_every;
    return final_due();
}

bool sentinel_schedule::final_due() const {
    if (m_every > 0)
        return true;
    if (m_probes == 0) // one probe alone cannot judge drift
        return false;
    const double mean_probe_s = m_probe_total_s / m_probes;
    return m_factor * (m_probe_total_s + mean_probe_s) <= m_now_s;
}

} // namespace ringscale
