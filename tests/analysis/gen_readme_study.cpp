// bench_gen_readme_study: the synthetic study the README examples test runs the READMEs'
// ringscale-stats commands on (tests/e2e/readme_examples.py): the predict tests' study
// (tests/analysis/predict_study.hpp: attention, train_step and the collectives, times from the
// cost model with planted figures) as OUT/calib (P = 1, 2; collectives at 2 and 4) and
// OUT/heldout (P = 4), each case with its topology recorded as the launcher records it (one
// node of P ranks: nodes = 1, ranks_per_node = P). Its train_step cases carry a --numerics
// series (20 steps within their floor) for the READMEs' `ringscale-stats numerics`.
//
// usage: bench_gen_readme_study OUT
#include "src/base/numerics_schema.hpp"
#include "tests/analysis/predict_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <string>

using namespace ringscale::test_fixture;

namespace {

/// One node of `p` ranks in every case's identity, as the launcher writes it.
void with_topology(std::vector<fixture_case>& cases, int p) {
    for (fixture_case& c : cases) {
        c.int_params.emplace_back("nodes", 1);
        c.int_params.emplace_back("ranks_per_node", p);
    }
}

/// A train_step --numerics series of 20 steps on every train_step case: the loss decays, the
/// run stays within half its floor of the reference (so each case is "the same training").
void with_numerics(std::vector<fixture_case>& cases) {
    for (fixture_case& c : cases) {
        if (c.job != "train_step")
            continue;
        std::map<std::string, std::vector<double>> v;
        for (int step = 0; step < 20; ++step) {
            const double loss = 7 * std::exp(-0.1 * step), floor = 1e-4 * (1 + step);
            v["ref_loss"].push_back(loss);
            v["loss"].push_back(loss + 0.5 * floor);
            v["ref_grad_norm"].push_back(1.0 / (1 + step));
            v["grad_norm"].push_back(1.0 / (1 + step) + 0.5 * floor);
            v["ref_update_norm"].push_back(1e-3);
            v["update_norm"].push_back(1e-3);
            v["param_abs_err"].push_back(0.5 * floor);
            v["param_rel_err"].push_back(0.5 * floor);
            v["floor_loss"].push_back(floor);
            v["floor_grad_norm"].push_back(floor);
            v["floor_param_abs"].push_back(floor);
            // The fp64 reference: the same-dtype reference within a quarter floor of it.
            v["fp64_loss"].push_back(loss - 0.25 * floor);
            v["fp64_grad_norm"].push_back(1.0 / (1 + step));
            v["fp64_update_norm"].push_back(1e-3);
            v["param_fp64_abs"].push_back(0.75 * floor);
            v["ref_param_fp64_abs"].push_back(0.25 * floor);
            v["floor_fp64_loss"].push_back(1.25 * floor);
            v["floor_fp64_grad_norm"].push_back(1.25 * floor);
            v["floor_fp64_param_abs"].push_back(1.25 * floor);
        }
        for (const std::string& name : ringscale::schema::numerics_datasets())
            if (v.count(name)) // no budget against fp64: train_step does not write one
                c.numerics.emplace_back(name, v.at(name));
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_gen_readme_study OUT\n");
        return 2;
    }
    try {
        const std::string out = argv[1];
        std::filesystem::create_directories(out + "/calib");
        std::filesystem::create_directories(out + "/heldout");
        for (int p : {1, 2, 4}) {
            std::vector<fixture_case> cases;
            for (std::int64_t s : {512, 2048})
                add_attention(cases, p, s);
            add_train(cases, p);
            with_numerics(cases);
            with_topology(cases, p);
            write_p(out + (p == 4 ? "/heldout" : "/calib"), "jobs_p" + std::to_string(p), p, cases);
        }
        for (int p : {2, 4}) {
            std::vector<fixture_case> cases;
            add_collectives(cases, p);
            // Three sizes a collective (4 KiB, 256 KiB, 16 MiB) fit alpha and beta as well as
            // seven and make predict's bootstrap (the README's commands use 2,000 replicates)
            // twice as quick.
            cases.erase(std::remove_if(cases.begin(), cases.end(),
                                       [](const fixture_case& c) {
                                           const std::int64_t b = c.int_params.front().second;
                                           return b != 4096 && b != (256 << 10) && b != (16 << 20);
                                       }),
                        cases.end());
            with_topology(cases, p);
            write_p(out + "/calib", "coll_p" + std::to_string(p), p, cases);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gen_readme_study: %s\n", e.what());
        return 2;
    }
}
