// Calibration: the figures of cost.hpp fitted to measured cases.
//   compute: each case's measured compute_s (mean over ranks, per iteration) against the work
//            its job's model gives each rank over the rank's width, by non-negative least
//            squares on relative error, per device: seconds per attention FLOP, per GEMM
//            FLOP, per byte of memory-bound work and per kernel call; on a CPU also the
//            speed-up of threads beyond a rank's first (the grid 0, 0.05, ..., 1 searched for
//            the smallest residual, 1 where every case ran the same threads); and the
//            rank-to-rank jitter of compute (median over cases at P >= 2 of the SD of log
//            rank / mean-rank compute per iteration) that the slowest rank adds;
//   links:   collectives cases' step times against steps(op, g) and bytes x busbw_factor
//            (nccl-tests), per link level (scope intra|inter, or inter-node for a world-scope
//            case over several nodes): alpha and beta, and per collective where one was
//            measured at two or more sizes; and how many links a node's ranks share to
//            other nodes (links.hpp), when link tests ran at 1 and at r > 1 ranks per node:
//            the node_links (1 to r, step 0.05) under which both give the same per-collective
//            figures (smallest relative residual), 0 (none shared) when r fits best; and
//            where r ranks outnumber those links, how much slower than their share the
//            shared flows ran, by bytes per flow (links.hpp congestion_factor).
// Bootstrap replicates resample every case's launches, then iterations within them, and fit
// again, so a band carries the calibration's uncertainty.
#pragma once

#include "analysis/statistics/hierarchical.hpp"
#include "nnls.hpp"
#include "target.hpp"

#include <array>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ringscale::analysis::predict {

/// One case's compute: features (work / width per figure, mean over ranks) and samples.
struct compute_obs {
    std::string device_key;
    std::array<double, 4> x{}; ///< attention FLOP, GEMM FLOP, memory bytes, calls (width 1)
    launch_samples y;          ///< mean-rank compute_s per iteration, by launch
    double threads = 1;        ///< per rank (rank_threads)
    double share = 1;          ///< cores a rank can use (rank_share)
    bool gpu = false;
    double jitter = std::numeric_limits<double>::quiet_NaN(); ///< this case's (P >= 2)
    int world_size = 1;
    std::size_t case_index = 0; ///< into calibration_set::cases
};

/// One collectives case.
struct link_obs {
    coll op = coll::sendrecv;
    mpi_call call = mpi_call::blocking; ///< the op's i-form (iallgather...): nonblocking
    link_level level = link_level::intra;
    int group = 2;
    double bytes = 0;
    /// Bytes x this is what crosses the level's links per rank, as predictions price it
    /// (placed_coll_cost): busbw_factor(op, group); an all-to-all, all-gather or
    /// reduce-scatter over nodes (g ranks, r per node) (g - r) / g.
    double byte_factor = 1;
    /// Flows of one node on its links at once (r for those three over nodes, else 1): their
    /// time is also x link_share(flows) (links.hpp).
    double flows = 1;
    int ranks_per_node = 1; ///< of the placement it ran on
    launch_samples y;       ///< step times by launch
};

/// Everything a calibration reads from CALIB.
struct calibration_set {
    std::vector<compute_obs> compute;
    std::vector<link_obs> links;
    double node_cores = 1;          ///< the largest CPU affinity any rank recorded
    std::vector<target> cases;      ///< non-collectives cases with timings (for residuals)
    std::vector<std::string> notes; ///< cases left out, and why
};

/// The observations of the pooled cases (status ok, with timings).
calibration_set gather_calibration(const std::vector<pooled_case>& pooled);

/// How well a fit matches the rows it was fitted on: |log(measured / fitted)| over them.
struct fit_quality {
    int rows = 0;
    double median_abs = unknown; ///< a log ratio: 0.04 is about 4%
    double max_abs = unknown;
    double worst_bytes = unknown; ///< link fits: the size (nccl-tests bytes) of the worst row
    double min_bytes = unknown, max_bytes = unknown; ///< link fits: the sizes measured
    int sizes = 0;                                   ///< link fits: distinct sizes
    /// Two regimes: the worst row under one alpha and beta for every size (what the split
    /// fixed), and its size.
    double one_regime_max_abs = unknown;
    double one_regime_worst_bytes = unknown;
    int upper_sizes = 0; ///< two regimes: the sizes measured in the upper one
};

/// Fitted figures: compute per device key, links shared.
struct calibration {
    std::map<std::string, compute_figures> compute;
    std::map<std::string, double> thread_efficiency;
    std::map<std::string, double> rank_jitter;
    std::map<std::string, bool> gpu;
    std::array<link_figures, 2> links;
    std::array<std::map<coll, link_figures>, 2> per_op;
    double node_cores = 1;
    double node_links = 0; ///< links.hpp; 0: not measured, or no sharing seen
    /// figures::congestion: per collective measured at two or more sizes and per call, its
    /// link tests whose flows outnumbered node_links, as (bytes per flow, median measured /
    /// modelled under the collective's figures, fitted on its blocking calls where measured).
    congestion_curves congestion;
    /// The fits' quality: compute per device key (its cases), links per level and per
    /// collective (its sizes).
    std::map<std::string, fit_quality> compute_quality;
    std::array<fit_quality, 2> link_quality;
    std::array<std::map<coll, fit_quality>, 2> per_op_quality;
    /// Figures for a target on `device_key` (compute NaN when that device was not measured).
    figures for_device(const std::string& device_key) const;
};

/// Fit from one statistic per observation (`cy` per compute obs, `ly` per link obs; NaN
/// leaves an observation out). A device in `fixed_eta` keeps that speed-up per extra thread
/// instead of fitting one (a fold of leave-one-P-out that cannot identify it).
calibration fit_calibration(const calibration_set& set, const std::vector<double>& cy,
                            const std::vector<double>& ly,
                            const std::map<std::string, double>& fixed_eta = {});

/// The pooled medians of every observation.
void observation_medians(const calibration_set& set, std::vector<double>& cy,
                         std::vector<double>& ly);

/// Called after each bootstrap replicate: replicates done, seconds since the first began.
using replicate_progress = std::function<void(std::size_t done, double elapsed_s)>;

/// `replicates` fits on two-level resamples (fixed seed); `progress` (when set) after each.
std::vector<calibration> bootstrap_calibrations(const calibration_set& set, std::size_t replicates,
                                                std::uint64_t seed,
                                                const replicate_progress& progress = {});

} // namespace ringscale::analysis::predict
