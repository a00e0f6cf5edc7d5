// The synthetic study the predict tests calibrate on: attention (ring, all-gather, Ulysses,
// hybrid), train_step (DDP, ZeRO-1, FSDP) and the collectives, each case's times following
// the cost model with planted figures on a 2-core node (threads: 2 a rank at P=1, else 1).
#pragma once

#include "analysis/predict/cost.hpp"
#include "tests/analysis/analysis_fixture.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::test_fixture {

/// The planted figures: rates per core-equivalent, per-call overhead, intra-node link.
inline constexpr double attn_rate = 20e9, gemm_rate = 30e9, mem_rate = 5e9, call_s = 20e-6;
inline constexpr double alpha_s = 5e-6, beta_bps = 4e9;

/// The planted figures with speed-up `eta` per extra thread of a rank.
analysis::predict::figures truth(double eta = 1);

/// The ring and the three context-parallel schemes at P = `p` and sequence length `s`.
void add_attention(std::vector<fixture_case>& out, int p, std::int64_t s, double eta = 1);
/// train_step under DDP, ZeRO-1 and FSDP at P = `p`.
void add_train(std::vector<fixture_case>& out, int p, double eta = 1);
/// The collectives (allreduce ... sendrecv, 4 KiB to 16 MiB) at P = `p`.
void add_collectives(std::vector<fixture_case>& out, int p);
/// `cases` written as `dir`/`name`.h5, their ranks running 2 threads at P=1, else 1.
void write_p(const std::string& dir, const std::string& name, int p,
             const std::vector<fixture_case>& cases);

} // namespace ringscale::test_fixture
