// The results schema's part for train_step --numerics and --dtype: the case
// attributes and the optional `numerics` subgroup of a case. Beside results_schema.hpp so that
// only the code that writes or reads them includes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ringscale::schema {

namespace attr {
/// train_step --numerics (derived; jobs/train_numerics.hpp): steps followed, floor runs, what
/// the reference and the floor are, and their costs in seconds on rank 0 (the reference run,
/// rank 0's share of the floor runs, the distributed steps with their statistics).
inline constexpr const char* numerics_steps = "numerics_steps";
inline constexpr const char* numerics_floor_runs = "numerics_floor_runs";
inline constexpr const char* numerics_reference = "numerics_reference";
inline constexpr const char* numerics_floor = "numerics_floor";
inline constexpr const char* numerics_reference_s = "numerics_reference_s";
inline constexpr const char* numerics_floor_s = "numerics_floor_s";
inline constexpr const char* numerics_run_s = "numerics_run_s";
/// The fp64 reference's cost in seconds on rank 0 (kernels/model/reference_fp64; files before
/// it lack it), and 1 where it was an earlier case's of the launch with the same model, data
/// and optimizer in any dtype (its cost is that case's).
inline constexpr const char* numerics_fp64_s = "numerics_fp64_s";
inline constexpr const char* numerics_fp64_reused = "numerics_fp64_reused";
/// 1 where the reference and floor were those of an earlier case of the launch with the same
/// model, data, dtype and steps (their costs are that case's).
inline constexpr const char* numerics_baseline_reused = "numerics_baseline_reused";
/// bf16, fp16, fp8: the budget against fp64 as one line, its formula and terms' values
/// (jobs/numerics_budget.hpp; files before it lack it).
inline constexpr const char* numerics_fp64_budget = "numerics_fp64_budget";
/// train_step --dtype other than fp32: the precision as one line (derived), and (fp16) the
/// values that overflowed fp16 on rank 0.
inline constexpr const char* train_precision = "train_precision";
inline constexpr const char* fp16_overflows = "fp16_overflows";
/// identity (from the options, "-" as "_"): the seed offset; the fp8 recipe.
inline constexpr const char* data_seed = "data_seed";
inline constexpr const char* fp8_recipe = "fp8_recipe";
} // namespace attr

/// train_step --numerics: the subgroup /cases/<NNNN>/numerics, one f64 [steps] dataset per
/// series, named by numerics_datasets(). Optional: files without it read unchanged. Values may
/// be non-finite (a diverged run is a result, not damaged input).
inline constexpr const char* numerics_group = "numerics";
/// The most steps a numerics group may hold (a hostile file's length is checked first).
inline constexpr std::uint64_t numerics_max_steps = 1u << 20;

/// The datasets of a numerics group, in order: the run's loss, grad_norm (global L2 norm of
/// the summed gradient), update_norm (L2 norm of the parameter change), param_abs_err (max
/// |p - p_ref|), param_rel_err (param_abs_err / max |p_ref|); the reference's ref_loss,
/// ref_grad_norm, ref_update_norm; the floor's floor_loss, floor_grad_norm, floor_param_abs
/// (the worst per step over the floor runs of |x - x_ref|). Then the fp64 reference's
/// (absent from files before it; each read when present): its fp64_loss, fp64_grad_norm,
/// fp64_update_norm; param_fp64_abs (max |p - p_fp64| of the run), ref_param_fp64_abs (the
/// same of the same-dtype reference); floor_fp64_loss, floor_fp64_grad_norm,
/// floor_fp64_param_abs (the worst per step over the floor runs of |x - x_fp64|). Then a bf16,
/// fp16 or fp8 case's budgets against fp64, each read and judged where present:
/// fp64_budget_loss and fp64_budget_grad_norm (the most |loss - fp64_loss| and |grad_norm -
/// fp64_grad_norm| per step; an earlier form, train_step does not write them: they did not hold
/// their margins, jobs/MEASUREMENTS.md); fp64_grad_rel_err and fp64_budget_grad_rel (step 1's
/// gradient's worst tensor relative error against fp64 and its budget, at step 1 and 0 after,
/// jobs/numerics_budget.hpp; files before the budget have the error alone).
inline const std::vector<std::string>& numerics_datasets() {
    static const std::vector<std::string> names = {"loss",
                                                   "grad_norm",
                                                   "update_norm",
                                                   "param_abs_err",
                                                   "param_rel_err",
                                                   "ref_loss",
                                                   "ref_grad_norm",
                                                   "ref_update_norm",
                                                   "floor_loss",
                                                   "floor_grad_norm",
                                                   "floor_param_abs",
                                                   "fp64_loss",
                                                   "fp64_grad_norm",
                                                   "fp64_update_norm",
                                                   "param_fp64_abs",
                                                   "ref_param_fp64_abs",
                                                   "floor_fp64_loss",
                                                   "floor_fp64_grad_norm",
                                                   "floor_fp64_param_abs",
                                                   "fp64_budget_loss",
                                                   "fp64_budget_grad_norm",
                                                   "fp64_grad_rel_err",
                                                   "fp64_budget_grad_rel"};
    return names;
}

} // namespace ringscale::schema
