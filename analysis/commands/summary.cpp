// `ringscale-stats summary INPUT...`: one row per case.
#include "shared.hpp"

namespace ringscale::analysis {

namespace {

struct summary_command final : input_command {
    const char* name() const override { return "summary"; }
    const char* help() const override {
        return "One row per case: median step time with its 95% CI, percentiles, outliers, "
               "time imbalance (the median over launches of each launch's slowest / mean per-rank "
               "median), communication share, throughput, peak memory per rank and the machine "
               "marks (launches measured on a contended machine or while the drift sentinel "
               "drifted). Rates above the hardware's ceiling read 'impossible', collectives at "
               "P=1 'no-op'. CSV and JSON have the same columns whatever the data.";
    }
    void declare(po::options_description& d) override {
        declare_common(d, m_common);
        declare_pool_resources(d, m_pool_resources);
    }
    int run(std::ostream& out) const override {
        const result_set rs = load(m_common.inputs, m_common.strict);
        const auto pooled = pool_with_notes(rs, m_pool_resources);
        const auto rows = summarize_with_notes(pooled, m_common);
        print_tables(out, m_common.format, {{"cases", summary_table(rows)}});
        return 0;
    }
};

} // namespace

RINGSCALE_STATS_FACTORY(summary, summary_command)

} // namespace ringscale::analysis
