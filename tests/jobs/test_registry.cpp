// Every job's enumerated options against the reader's identity check
// (schema::allowed_values): a value the launcher accepts and writes into a case's identity
// must be one the reader keeps. (cp_variant lacked 'hybrid': train_step's hybrid cases were
// written and then dropped by every ringscale-stats command as "not one of ring, allgather,
// ulysses".)
#include "jobs/registry.hpp"
#include "src/base/results_schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace ringscale;
using jobs::option_decl;
using jobs::option_type;

TEST(job_registry, every_choice_a_job_accepts_is_one_the_reader_keeps) {
    int checked = 0;
    for (const auto& j : jobs::all_jobs())
        for (const option_decl& o : j->options()) {
            if (o.type != option_type::choice)
                continue;
            std::string attr = o.name;
            std::replace(attr.begin(), attr.end(), '-', '_');
            const auto* allowed = schema::allowed_values(attr);
            if (allowed == nullptr)
                continue;
            for (const std::string& v : o.values) {
                if (o.name == "dtype" && v == "auto")
                    continue; // resolved before the case is written ("auto" never is)
                EXPECT_NE(std::find(allowed->begin(), allowed->end(), v), allowed->end())
                    << j->name() << " --" << o.name << " " << v
                    << ": the launcher accepts it, the reader drops the case";
                ++checked;
            }
        }
    EXPECT_GE(checked, 10); // layout, scope, dp and cp variants at least
}
