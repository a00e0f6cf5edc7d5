// The arithmetic of an accuracy measurement against an fp64 reference (DESIGN.md, "Accuracy
// against fp64"): which rows are sampled, and the normwise relative errors of a tensor's
// sampled rows. Pure, header-only; the attention jobs reduce tallies over ranks.
#pragma once

#include "kernels/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ringscale::kernels {

/// Errors of one tensor's sampled elements against the reference: max|got - ref|, the sum of
/// squares, max|ref| and the count. Normwise: max_rel = max|e| / max|ref|, rms_rel =
/// sqrt(mean e^2) / max|ref|, so rms_rel <= max_rel always and a reference entry near zero
/// does not blow up the ratio.
struct error_tally {
    double max_err = 0, sum_sq = 0, max_ref = 0, count = 0;

    /// One element. A reference of -inf (an LSE with no visible key) counts only when `got`
    /// differs (then the error is infinite); a non-finite `got` makes the error infinite.
    void add(double got, double ref) {
        if (std::isinf(ref) && got == ref)
            return;
        const double e = std::fabs(got - ref);
        const double err = std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
        max_err = std::max(max_err, err);
        sum_sq += err * err;
        if (std::isfinite(ref))
            max_ref = std::max(max_ref, std::fabs(ref));
        count += 1;
    }
    void merge(const error_tally& t) {
        max_err = std::max(max_err, t.max_err);
        sum_sq += t.sum_sq;
        max_ref = std::max(max_ref, t.max_ref);
        count += t.count;
    }
    /// NaN when nothing was counted or the reference is all zero.
    double max_rel() const { return ok() ? max_err / max_ref : std::nan(""); }
    double rms_rel() const { return ok() ? std::sqrt(sum_sq / count) / max_ref : std::nan(""); }

  private:
    bool ok() const { return count > 0 && max_ref > 0; }
};

/// `want` rows of [0, rows) in ascending order, one drawn from each of `want` equal strata
/// (so every part of the sequence, and every rank's shard, is represented), seeded by
/// (seed, stream); every row when want >= rows.
inline std::vector<std::int64_t> sample_rows(std::int64_t rows, std::int64_t want,
                                             std::uint64_t seed, std::uint64_t stream) {
    std::vector<std::int64_t> out;
    if (want >= rows) {
        for (std::int64_t r = 0; r < rows; ++r)
            out.push_back(r);
        return out;
    }
    for (std::int64_t i = 0; i < want; ++i) {
        const std::int64_t lo = i * rows / want, hi = (i + 1) * rows / want; // hi > lo
        const std::uint64_t x = mix64(seed ^ mix64(stream * 0x9e3779b97f4a7c15ull + i));
        out.push_back(lo + static_cast<std::int64_t>(x % static_cast<std::uint64_t>(hi - lo)));
    }
    return out;
}

} // namespace ringscale::kernels
