// A synthetic train_step --numerics study for the report's tests: two
// configurations (ddp/cp-ring cp=2, zero1/cp-ulysses cp=2) at P = 1, 2, 4 in each of the given
// dtypes, over the given seeds, 40 steps each. The loss decays; a correct case stays within half
// its dtype's floor of the reference (fp32's floor 1e-6 x step, the others' 1e-3 x step). In
// the last dtype, two cases diverge: ddp/cp-ring at P=4 (first seed) by 50 x its floor from
// step 15 on, and zero1/cp-ulysses at P=4 (first seed) with a non-finite loss from step 25.
#pragma once

#include "tests/analysis/analysis_fixture.hpp"

#include <string>
#include <vector>

namespace ringscale::test_fixture {

struct numerics_study {
    std::vector<std::string> dtypes = {"bf16", "fp32"};
    std::vector<int> seeds = {0};
    int steps = 40;
    /// Not empty: every case's variant is this text (a hostile label), the configurations
    /// told apart by their `note` attribute.
    std::string variant;
};

/// The study's cases.
std::vector<fixture_case> numerics_cases(const numerics_study& s);

} // namespace ringscale::test_fixture
