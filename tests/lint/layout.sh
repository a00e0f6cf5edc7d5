#!/usr/bin/env bash
# The code criteria of the layout, measured on the tracked tree; each prints its
# figure and the command that gives it, and the test fails when one is out of bounds.
# usage: tests/lint/layout.sh   (from the repository root)
set -u
fail=0
check() { # name, measured, limit, command
    if [ "$2" -le "$3" ]; then verdict=ok; else verdict=FAIL; fail=1; fi
    printf '%-4s %-52s %6s (<= %s)   %s\n' "$verdict" "$1" "$2" "$3" "$4"
}

cmd="git grep -nE '\"(cuda|cpu|nccl|mpi)\"\\s*(==|!=)|(==|!=)\\s*\"(cuda|cpu|nccl|mpi)\"'"
compares=$(git grep -nE '"(cuda|cpu|nccl|mpi)"\s*(==|!=)|(==|!=)\s*"(cuda|cpu|nccl|mpi)"')
check "string comparisons choosing a backend" "$(printf '%s' "$compares" | grep -c .)" 4 "$cmd"
files=$(printf '%s\n' "$compares" | grep . | cut -d: -f1 | sort -u | grep -c .)
check "  files holding them (one factory)" "$files" 1 "same, cut -d: -f1 | sort -u"

check "virtual methods of the executor (destructor included)" \
    "$(grep -c 'virtual ' kernels/executor.hpp)" 15 "grep -c 'virtual ' kernels/executor.hpp"

check "presentation in the job interface" \
    "$(grep -cE 'columns\(|row\(|closing_table|std::ostream|fmt::|printf' src/engine/job.hpp)" 0 \
    "grep -cE 'columns\\(|row\\(|closing_table|std::ostream|fmt::|printf' src/engine/job.hpp"

check "includes of src/base from above it" \
    "$(git grep -nE '#include\s*[<"](comm|kernels|jobs|analysis|src/(engine|launcher))/' -- src/base | grep -c .)" 0 \
    "git grep -nE '#include\\s*[<\"](comm|kernels|jobs|analysis|src/(engine|launcher))/' -- src/base"

check "launcher code linked by job tests or the jobs" \
    "$(cat tests/jobs/CMakeLists.txt tests/jobs/*/CMakeLists.txt jobs/CMakeLists.txt src/engine/CMakeLists.txt 2>/dev/null | grep -v '^\s*#' | grep -c 'ringscale_launcher')" 0 \
    "grep ringscale_launcher tests/jobs/**/CMakeLists.txt jobs/ src/engine/ CMakeLists.txt"

check "includes from the analysis' ground (cases/, statistics/) above it" \
    "$(git grep -nE '#include\s*"analysis/(reading|measures|comparisons|models|predict|presentation|commands)/' -- analysis/cases analysis/statistics | grep -c .)" 0 \
    "git grep -nE '#include\\s*\"analysis/(reading|...|commands)/' -- analysis/cases analysis/statistics"
check "analysis libraries the launcher links besides its ground" \
    "$(grep -v '^\s*#' src/launcher/CMakeLists.txt | grep -cE 'ringscale_analysis\b([^_]|$)')" 0 \
    "grep -E 'ringscale_analysis\\b([^_]|\$)' src/launcher/CMakeLists.txt"

# ringscale-stats: a subcommand is its own file plus one line of commands.inc; nothing else
# names it (no if-chain over subcommand names).
listed=$(grep -oE '^RINGSCALE_STATS_COMMAND\([a-z_]+\)' analysis/commands/commands.inc |
    sed -E 's/.*\(([a-z_]+)\)/\1/' | sort)
defined=$(git grep -hoE '^RINGSCALE_STATS_FACTORY\([a-z_]+,' -- analysis |
    sed -E 's/.*\(([a-z_]+),/\1/' | sort)
check "subcommands defined but not in commands.inc, or listed but not defined" \
    "$(comm -3 <(echo "$defined") <(echo "$listed") | grep -c .)" 0 \
    "comm -3 of RINGSCALE_STATS_FACTORY definitions and RINGSCALE_STATS_COMMAND lines"
names=$(echo "$listed" | paste -sd'|')
check "subcommand names compared by the ringscale-stats dispatcher" \
    "$(git grep -nE "(==|!=) *\"($names)\"" -- analysis/commands analysis/main.cpp | grep -c .)" 0 \
    "git grep -nE '(==|!=) *\"(<commands.inc names>)\"' -- analysis/commands analysis/main.cpp"

# The backends are reached through the executor and kernels/kernels.hpp alone: nothing outside
# kernels/ (but the backends' own tests and benchmarks) includes or calls them.
backend_inc="git grep -nE '#include\\s*[<\"]kernels/(cpu|cuda)/' -- ':!kernels' ':!tests/kernels' ':!tests/bench'"
check "includes of kernels/cpu/, kernels/cuda/ outside kernels/" \
    "$(git grep -nE '#include\s*[<"]kernels/(cpu|cuda)/' -- ':!kernels' ':!tests/kernels' ':!tests/bench' | grep -c .)" 0 \
    "$backend_inc"
check "  calls of kernels::cpu::, kernels::cuda:: outside it" \
    "$(git grep -nE '(kernels::)?\b(cpu|cuda)::[a-z_]+\(' -- ':!kernels' ':!tests/kernels' ':!tests/bench' | grep -c .)" 0 \
    "git grep -nE '(kernels::)?\\b(cpu|cuda)::[a-z_]+\\(' -- ':!kernels' ':!tests/kernels' ':!tests/bench'"

largest=$(git ls-files src comm kernels jobs analysis | xargs wc -l | grep -v ' total$' | sort -n | tail -1)
check "lines of the largest product file (${largest##* })" "$(echo "$largest" | awk '{print $1}')" 400 \
    "git ls-files src comm kernels jobs analysis | xargs wc -l | sort -n | tail"
exit $fail
