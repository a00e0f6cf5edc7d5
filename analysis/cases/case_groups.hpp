// A case's attribute groups as ringscale-stats holds them: ringscale/2 files store identity,
// run, derived and outcome apart; ringscale/1 files stored them flat, so their identity is
// rebuilt with the schema's known table (src/base/results_schema.hpp) and the launch's
// /meta/config (the user's --dp, --ulysses-degree and --threads, which ringscale/1 lost).
#pragma once

#include "results.hpp"

#include <string>

namespace ringscale::analysis {

/// The value of `key` in a resolved job file text ("key = value" lines; "-" and "_" alike),
/// or "" when absent or a list ("1,2"). Pure.
std::string config_value(const std::string& config_text, const std::string& key);

/// Fill c.identity from c.attrs of a ringscale/1 case, with the launch's `config_text`. Pure.
void rebuild_v1_identity(case_data& c, const std::string& config_text);

/// Attribute names of c.identity that make its key: all but job, variant and world_size.
bool is_identity_param(const std::string& name);

/// Add to `c`'s identity (and flat attributes) what files written before them lack, with
/// what those cases ran (schema::identity_defaults: nodes 1, ranks_per_node = world_size,
/// scope world ...), so old and new launches of one case pool. Needs c.job, c.world_size.
void add_identity_defaults(case_data& c);

} // namespace ringscale::analysis
