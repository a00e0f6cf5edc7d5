// The figures a cost model of ringscale's jobs runs on, and what a prediction is made of.
// Compute: seconds per unit of work (attention FLOP, GEMM FLOP, byte of memory-bound work,
// kernel call) on one core-equivalent (a CPU core, or one GPU); a rank's compute time is its
// work times these figures over its width (the cores it can use). Communication: per link
// level (inside a node, between nodes) a latency alpha per algorithm step and a bandwidth beta
// in nccl-tests' bus-bandwidth convention, so a collective of `bytes` over g ranks costs
// steps(op, g) * alpha + bytes * busbw_factor(op, g) / beta.
#pragma once

#include <array>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ringscale::analysis::predict {

inline constexpr double unknown = std::numeric_limits<double>::quiet_NaN();

/// Link levels: 0 inside a node, 1 between nodes.
enum class link_level { intra = 0, inter = 1 };
const char* to_string(link_level l);

/// Collectives with nccl-tests' size convention: the whole buffer for allreduce, broadcast
/// and sendrecv; the gathered output for allgather; the input for reduce_scatter; one rank's
/// send buffer for alltoall.
enum class coll { sendrecv, allreduce, allgather, reduce_scatter, alltoall, broadcast };
/// How a job calls a collective: blocking, or posted and waited for later (MPI_Iallgather...,
/// which Open MPI runs with other algorithms, libnbc's; on the emulated cluster a 16 MiB
/// all-gather over 2 nodes x 2 ranks took 608 ms nonblocking against 864 ms blocking).
enum class mpi_call { blocking, nonblocking };

/// Parse a collectives job's `op`: one of the six, or a nonblocking form (iallreduce,
/// iallgather, ireduce_scatter), which sets `call`; false when it is neither.
bool parse_coll(const std::string& op, coll& out, mpi_call* call = nullptr);
const char* to_string(coll op);

/// nccl-tests' bus factor: 2(g-1)/g allreduce; (g-1)/g allgather, reduce_scatter, alltoall;
/// 1 sendrecv and broadcast.
double busbw_factor(coll op, int group);
/// Latency-bound steps of the bandwidth-optimal (ring) algorithm: 2(g-1) allreduce; g-1
/// allgather, reduce_scatter, alltoall; 1 sendrecv; ceil(log2 g) broadcast.
double alg_steps(coll op, int group);

/// Work of one rank in the units the compute figures price.
struct work {
    double attn_flop = 0; ///< attention FLOP (forward 4 per visible pair x B x H x D,
                          ///< backward 2.5 x that)
    double gemm_flop = 0; ///< dense-layer FLOP (2 per multiply-add)
    double mem_bytes = 0; ///< bytes of memory-bound work (packing, AdamW, sums)
    double calls = 0;     ///< kernel calls
    work& operator+=(const work& o);
};
work operator*(const work& w, double f);

/// Per (collective, call): points (bytes per flow, factor) sorted by bytes (links.hpp).
using congestion_curves =
    std::map<std::pair<coll, mpi_call>, std::vector<std::pair<double, double>>>;

/// Seconds per unit on one core-equivalent. NaN: not calibrated.
struct compute_figures {
    double s_per_attn_flop = unknown;
    double s_per_gemm_flop = unknown;
    double s_per_mem_byte = unknown;
    double s_per_call = unknown;
};

/// A link level's latency per step (s) and bus bandwidth (bytes/s); NaN: not calibrated.
/// A collective whose sizes no one alpha and beta fit (a busbw collapse past some size: a
/// shared-memory segment, a socket buffer, a shaper's burst) has a second regime from
/// `regime_bytes` on (its nccl-tests size) with its own alpha and beta.
struct link_figures {
    double alpha_s = unknown;
    double beta_bps = unknown;
    double regime_bytes = std::numeric_limits<double>::infinity(); ///< inf: one regime
    double alpha_above_s = unknown;
    double beta_above_bps = unknown;
    /// The figures that price a collective of `bytes` (nccl-tests size): one regime's.
    link_figures at(double bytes) const;
    bool two_regimes() const { return regime_bytes < std::numeric_limits<double>::infinity(); }
};

/// Every figure a prediction may need, and where each came from.
struct figures {
    compute_figures compute;
    std::array<link_figures, 2> links; ///< by link_level
    /// Per-collective refinements of a level (fitted when an op has two or more sizes).
    std::array<std::map<coll, link_figures>, 2> per_op;
    double node_cores = 1; ///< CPU cores a node's ranks share (CPU width); 1 on a GPU
    /// Speed-up of each thread beyond a rank's first: a rank of t threads computes on
    /// 1 + thread_efficiency (t - 1) core-equivalents (capped by its share of the node).
    double thread_efficiency = 1;
    /// Rank-to-rank jitter of compute: the SD of log(rank's compute / mean over ranks) in one
    /// iteration. The step waits for the slowest rank, so compute on the critical path is
    /// scaled by exp(jitter x expected_max_normal(P)) (0: no jitter, as on a profile).
    double rank_jitter = 0;
    bool gpu = false;       ///< width 1 per rank whatever its threads
    double fixed_width = 0; ///< > 0: every rank's width (the calibration's unit features)
    /// Links from a node to the others that its ranks' concurrent flows share (links.hpp);
    /// 0: each rank has its own (the default: nothing calibrated or stated says otherwise).
    double node_links = 0;
    /// Congestion of shared links (links.hpp), per collective and call: (bytes one flow moves
    /// across, measured time over the shared-link model's) from link tests whose ranks
    /// outnumbered their node's links, sorted by bytes. Empty: none measured (a profile
    /// states none).
    congestion_curves congestion;
};

/// Seconds of a prediction by the figure that priced them (the critical path only).
struct cost {
    double attn = 0, gemm = 0, mem = 0, calls = 0;
    std::array<double, 2> alpha{0, 0}, beta{0, 0};
    double total() const;
    double compute() const { return attn + gemm + mem + calls; }
    cost& operator+=(const cost& o);
};
cost operator*(const cost& c, double f);
cost operator+(cost a, const cost& b);
/// The larger of two (by total): what an overlapped pair of activities costs.
const cost& longer(const cost& a, const cost& b);

/// Compute cost of `w` on a rank of `width` core-equivalents (kernel calls are not divided:
/// their overhead is the serial part). NaN parts where a needed figure is not calibrated
/// (callers check finite()).
cost compute_cost(const work& w, const compute_figures& f, double width);

/// A level's figures for `op` at `bytes` (nccl-tests size): its per-op refinement where
/// fitted (the regime of `bytes`), else the level's.
link_figures level_figures(coll op, link_level level, const figures& f, double bytes);

/// Cost of one collective over `group` ranks at `level` (per-op figures where fitted).
cost coll_cost(coll op, double bytes, int group, link_level level, const figures& f);

/// E[max of p independent standard normals] (0 for p = 1, 1/sqrt(pi) for p = 2), by
/// numerical integration of x p phi(x) Phi(x)^(p-1).
double expected_max_normal(int p);

/// `c` with its compute parts scaled by the slowest of P ranks' jitter (figures::rank_jitter).
cost with_rank_jitter(const cost& c, double jitter, int ranks);

/// Name of the largest part of `c` ("compute attention", "beta inter", ...) and its share.
std::pair<std::string, double> dominant(const cost& c);

} // namespace ringscale::analysis::predict
