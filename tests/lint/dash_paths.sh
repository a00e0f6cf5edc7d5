#!/usr/bin/env bash
# Paths that start with '-' stay paths: every `cd` in a tracked shell script, in C++ that builds
# a shell command (gnuplot's `cd`) and every call of ringscale or ringscale-stats in the Slurm
# scripts passes its paths after `--` (or as ./NAME). Prints each call that does not and fails.
# usage: tests/lint/dash_paths.sh [SCRIPT...]   (from the repository root; with SCRIPTs, those
#        alone are checked, each as a Slurm script: the hostile tests check that it can fail)
set -u
fail=0
# Backslash-continued lines joined, comments dropped: FILE:LINE:TEXT of each command line.
joined() {
    for f in "$@"; do
        awk -v f="$f" '
            /^[[:space:]]*#/ && buf == "" { next }
            { if (buf == "") start = NR; buf = buf $0 }
            /\\$/ { sub(/\\$/, "", buf); next }
            { print f ":" start ":" buf; buf = "" }' "$f"
    done
}
if [ $# -gt 0 ]; then
    scripts=("$@") slurm=("$@")
else
    mapfile -t scripts < <(git ls-files '*.sh' '*.sbatch' 'slurm/*' | grep -vx "tests/lint/dash_paths.sh")
    mapfile -t slurm < <(git ls-files 'slurm/*')
fi
bad=$(joined "${scripts[@]}" | grep -E '(^|[^[:alnum:]_-])cd +[^- ]|(^|[^[:alnum:]_-])cd +-[^-]')
if [ -n "$bad" ]; then
    printf 'FAIL: cd without --:\n%s\n' "$bad"
    fail=1
fi
# A call: the tool's variable where a command starts (after exec, a runner's `--` or array,
# ||, &&, ; or an opening parenthesis), and no `--` after it.
call='(^[^:]*:[0-9]+:[[:space:]]*|exec +|-- +|\]\}" +|\|\| +|&& +|; +|\( *)"\$(stats|ringscale)" +[a-z-]'
bad=$(joined "${slurm[@]}" | grep -E "$call" | grep -vE '"\$(stats|ringscale)" .* -- ')
if [ -n "$bad" ]; then
    printf 'FAIL: a call of the tools without -- before its paths:\n%s\n' "$bad"
    fail=1
fi
[ $# -gt 0 ] && bad="" ||
    bad=$(git grep -nE '"cd +[^-]|"cd +-[^-]' -- '*.cpp' '*.hpp')
if [ -n "$bad" ]; then
    printf 'FAIL: a shell cd built in C++ without --:\n%s\n' "$bad"
    fail=1
fi
[ "$fail" = 0 ] && echo "ok: every cd and every tool call in the Slurm scripts passes paths after --"
exit "$fail"
