#include "analysis/presentation/table.hpp"
#include "analysis/presentation/table_fit.hpp"
#include "analysis/presentation/views.hpp"
#include "src/base/error.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace ringscale::analysis;

namespace {
table sample() {
    table t;
    t.add_column("name", "name");
    t.add_column("value", "value_s");
    t.add_column("", "hidden", true);
    t.rows.push_back({text_cell("a,b"), number_cell(1.5, "1.5 s"), number_cell(2, "")});
    t.rows.push_back({text_cell("c"), number_cell(NAN, "x"), int_cell(3)});
    return t;
}
} // namespace

TEST(analysis_table, text_is_aligned_and_hides_machine_columns) {
    EXPECT_EQ(render(sample(), output_format::text),
              "name  value\n-----------\na,b   1.5 s\nc         -\n");
}

TEST(analysis_table, markdown) {
    EXPECT_EQ(render(sample(), output_format::md),
              "| name | value |\n|------|------:|\n| a,b  | 1.5 s |\n| c    |     - |\n");
}

TEST(analysis_table, csv_uses_full_precision_values_and_quotes) {
    EXPECT_EQ(render(sample(), output_format::csv), "name,value_s,hidden\n\"a,b\",1.5,2.0\nc,,3\n");
}

TEST(analysis_table, json_nulls_for_nan) {
    EXPECT_EQ(
        to_json(sample()).dump(),
        R"([{"hidden":2.0,"name":"a,b","value_s":1.5},{"hidden":3,"name":"c","value_s":null}])");
}

TEST(analysis_table, formats) {
    EXPECT_EQ(parse_format("md"), output_format::md);
    EXPECT_THROW(parse_format("xml"), ringscale::config_error);
    EXPECT_EQ(format_time(1.2345e-3), "1.234 ms"); // four significant digits (round-half-even)
    EXPECT_EQ(format_time(5.678e-5), "56.78 us");
    EXPECT_EQ(format_time(2.5), "2.5 s");
    EXPECT_EQ(format_interval(1e-3, 2e-3, true), "[1 ms, 2 ms]");
    EXPECT_EQ(format_interval(NAN, 2, false), "-");
}

// A table too wide for its columns leaves out its fit_drop_first columns before the figures at
// its right (summary: the spread's detail before the bandwidths), and names them.
TEST(analysis_table, fitting_leaves_out_the_tables_own_choice_first) {
    const auto wide = [] {
        table t;
        t.add_column("case", "case");
        for (const char* c : {"p99", "mean", "algbw", "busbw"})
            t.add_column(c, c);
        t.add_column("status", "status");
        for (const char* name : {"collectives/sendrecv", "collectives/allreduce"}) {
            t.rows.push_back({text_cell(name)});
            for (int k = 0; k < 4; ++k) // distinct figures: nothing repeats into a legend
                t.rows.back().push_back(number_cell(k, std::string(20, name[12]) + char('0' + k)));
            t.rows.back().push_back(text_cell("ok"));
        }
        return t;
    };
    table t = wide();
    t.fit_drop_first = {"p99", "mean"};
    const std::vector<std::string> above = fit_table(t, 80);
    EXPECT_EQ(t.titles, (std::vector<std::string>{"case", "algbw", "busbw", "status"}));
    EXPECT_NE(std::find(above.begin(), above.end(), "columns left out: p99, mean"), above.end());
    // Without the table's choice, the figures at its right go first.
    t = wide();
    fit_table(t, 80);
    EXPECT_EQ(t.titles, (std::vector<std::string>{"case", "p99", "mean", "status"}));
}

// One row keeps its first word when it is a job, and states every key=value field once, the
// first one too (crossover's crossings: a shape label that starts with comm=mpi).
TEST(analysis_table, fitting_one_row_states_every_field_once) {
    // Labels over 30 columns in a table wider than the 40 columns it is fitted to.
    const auto fitted = [](const std::string& label, std::string& kept) {
        table t;
        t.add_column("shape", "shape");
        t.add_column("P", "world_size");
        t.rows.push_back({text_cell(label), int_cell(4)});
        std::string above;
        for (const std::string& line : fit_table(t, 40))
            above += (above.empty() ? "" : "|") + line;
        kept = t.rows[0][0].text;
        return above;
    };
    std::string kept;
    EXPECT_EQ(fitted("comm=mpi device=cpu dtype=float32 heads=8", kept),
              "shape (every row): comm=mpi device=cpu|    dtype=float32 heads=8|"
              "(--wide: every field in full)");
    EXPECT_EQ(kept, "-");
    EXPECT_EQ(fitted("ring_attention/zigzag device=cpu dtype=float32 heads=8", kept),
              "shape (every row): device=cpu|    dtype=float32 heads=8|"
              "(--wide: every field in full)");
    EXPECT_EQ(kept, "ring_attention/zigzag");
}
