#include "decision.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ringscale::analysis {

namespace {

// The mark of one side as the rule weighs it: 1 when its effect is within the case's noise.
double weighed(double mark, double noise) {
    if (!(mark > 1))
        return 1;
    if (std::isfinite(noise) && std::log(mark) <= noise)
        return 1;
    return mark;
}

/// How much more a side's largest mark slows it than the other side's smallest mark slows
/// that one (1 when not more; unbounded stays unbounded).
double net(double largest, double others_least) {
    if (!(largest > 1))
        return 1;
    if (!std::isfinite(largest))
        return largest;
    const double least = std::isfinite(others_least) && others_least > 1 ? others_least : 1;
    return std::max(1.0, largest / least);
}

std::string mark_clause(const std::string& reason, double mark) {
    const std::string size =
        std::isfinite(mark) ? fmt::format("x{:.2f}", mark) : std::string("unbounded");
    return reason.empty() ? fmt::format("a mark ({})", size) : fmt::format("{} ({})", reason, size);
}

decision_result marked(const std::string& reason, double mark, double margin) {
    return {decision::not_decided,
            fmt::format("marked: {} could account for the {:+.0f}% margin",
                        mark_clause(reason, mark), 100 * (margin - 1)),
            ""};
}

} // namespace

decision_result decide(const decision_inputs& in) {
    const std::size_t fewest = std::min(in.launches_a, in.launches_b);
    if (fewest < 2)
        return {decision::not_decided, fewest == 0 ? "no launch" : "one launch", ""};
    if (!(std::isfinite(in.ratio_lo) && std::isfinite(in.ratio_hi) && in.ratio_lo > 0 &&
          in.ratio_hi >= in.ratio_lo))
        return {decision::not_decided, "no interval", ""};
    const double up = 1 + std::max(in.threshold, 0.0), down = 1 / up;
    // Each side's excess over the other: its largest mark against the other's smallest (a
    // mark present to the same degree on both sides cannot account for a change between
    // them).
    const double ma = weighed(net(in.mark_a, in.least_mark_b), in.noise);
    const double mb = weighed(net(in.mark_b, in.least_mark_a), in.noise);
    const double lo = in.ratio_lo, hi = in.ratio_hi;
    decision_result r;
    if (lo > up) {
        // b's mark could have made b slower by as much as the margin.
        if (lo / mb <= up)
            return marked(in.mark_reason_b, mb, lo);
        r = {decision::slower, "beyond threshold", ""};
    } else if (hi < down) {
        if (hi * ma >= down)
            return marked(in.mark_reason_a, ma, hi);
        r = {decision::faster, "beyond threshold", ""};
    } else if (lo >= down && hi <= up) {
        // A mark could hide a difference: b faster than it looks, or a slower than it looks.
        if (lo / mb < down)
            return marked(in.mark_reason_b, mb, lo / mb);
        if (hi * ma > up)
            return marked(in.mark_reason_a, ma, hi * ma);
        r = {decision::tie, "within threshold", ""};
    } else {
        return {decision::not_decided, "within noise", ""};
    }
    const double m = std::max(ma, mb);
    if (m > 1) {
        r.note = fmt::format("{} cannot account for the margin",
                             mark_clause(ma >= mb ? in.mark_reason_a : in.mark_reason_b, m));
        return r;
    }
    // A mark weighed as 1 because its effect is within the case's noise is still named.
    const double ra = net(in.mark_a, in.least_mark_b), rb = net(in.mark_b, in.least_mark_a);
    if (std::max(ra, rb) > 1)
        r.note = fmt::format(
            "{}, within the noise, cannot account for the margin",
            mark_clause(ra >= rb ? in.mark_reason_a : in.mark_reason_b, std::max(ra, rb)));
    return r;
}

const char* to_string(decision d) {
    switch (d) {
    case decision::faster:
        return "faster";
    case decision::slower:
        return "slower";
    case decision::tie:
        return "tie";
    case decision::not_decided:
        break;
    }
    return "not decided";
}

std::string verdict_text(const decision_result& r) {
    if (r.verdict != decision::not_decided)
        return to_string(r.verdict);
    return fmt::format("not decided ({})", r.reason);
}

int gate_exit_code(const decision_result& r) {
    if (r.verdict == decision::slower)
        return exit_regression;
    return r.verdict == decision::not_decided ? exit_not_decided : 0;
}

} // namespace ringscale::analysis
