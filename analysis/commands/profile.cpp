// `ringscale-stats profile INPUT...`: where a train_step's time goes, per operation.
#include "shared.hpp"

#include "analysis/measures/profile.hpp"

#include "src/base/error.hpp"

namespace ringscale::analysis {

namespace {

struct profile_command final : input_command {
    const char* name() const override { return "profile"; }
    const char* help() const override {
        return "Where a step's time goes: per-operation time per step and % of step of "
               "train_step cases run with --profile on.";
    }
    void declare(po::options_description& d) override { declare_common(d, m_common); }
    int run(std::ostream& out) const override {
        const table t = profile_table(load(m_common.inputs, m_common.strict).cases);
        if (t.rows.empty())
            throw config_error("no case has a profile (run train_step with --profile on)");
        print_tables(out, m_common.format, {{"profile", t}});
        return 0;
    }
};

} // namespace

RINGSCALE_STATS_FACTORY(profile, profile_command)

} // namespace ringscale::analysis
