// bench_gen_numerics: a synthetic train_step --numerics study (tests/analysis/numerics_study.hpp)
// as OUT/numerics.h5, for the report tests (report_html): two configurations at P = 1, 2, 4 in
// each dtype, two of the last dtype's cases diverged (one by a jump, one non-finite).
//
// usage: bench_gen_numerics OUT [DTYPE,...] [SEEDS]   (default: bf16,fp32 and 1 seed)
#include "tests/analysis/numerics_study.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <sstream>
#include <string>

using namespace ringscale::test_fixture;

int main(int argc, char** argv) {
    if (argc < 2 || argc > 4) {
        std::fprintf(stderr, "usage: bench_gen_numerics OUT [DTYPE,...] [SEEDS]\n");
        return 2;
    }
    try {
        numerics_study s;
        if (argc > 2) {
            s.dtypes.clear();
            std::istringstream in(argv[2]);
            for (std::string d; std::getline(in, d, ',');)
                s.dtypes.push_back(d);
        }
        if (argc > 3) {
            const int n = std::stoi(argv[3]);
            if (n < 1 || n > 100) {
                std::fprintf(stderr, "bench_gen_numerics: SEEDS must be 1 to 100\n");
                return 2;
            }
            s.seeds.clear();
            for (int i = 0; i < n; ++i)
                s.seeds.push_back(i);
        }
        if (s.dtypes.empty()) {
            std::fprintf(stderr, "bench_gen_numerics: no dtype\n");
            return 2;
        }
        std::filesystem::create_directories(argv[1]);
        fixture_file f;
        f.cases = numerics_cases(s);
        write_fixture_file(std::string(argv[1]) + "/numerics.h5", f);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gen_numerics: %s\n", e.what());
        return 2;
    }
}
