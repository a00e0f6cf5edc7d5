#!/usr/bin/env bash
# The GPU test binaries of a CMake build directory, one a line: "NP<TAB>PATH" with PATH
# relative to the build directory and NP the mpirun rank count (0: run without mpirun).
# Read from ctest (every test labelled `gpu`, so GPU tests added in any tests/*.cmake are
# found), deduplicated per binary and rank count; each test declared in tests/gpu*.cmake must
# be among them. Fails with one line (exit 2) when ctest or python3 is missing or a GPU test
# binary was not built.
# usage: tests/gpu/list_tests.sh BUILD_DIR
set -euo pipefail
[[ $# -eq 1 && -f $1/CMakeCache.txt ]] || {
    echo "usage: tests/gpu/list_tests.sh BUILD_DIR (a configured CMake build directory)" >&2
    exit 2
}
build=$(cd -- "$1" && pwd)
fail() { echo "list_tests.sh: $*" >&2; exit 2; }
command -v ctest >/dev/null || fail "ctest not found (it lists the GPU tests)"
command -v python3 >/dev/null || fail "python3 not found (it reads ctest's JSON)"
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
declared=()
if [[ -n $src ]]; then
    mapfile -t declared < <(cat "$src"/tests/gpu*.cmake 2>/dev/null |
        grep -Eo 'ringscale_(gpu|mpi)_test\([A-Za-z0-9_]+' | sed 's/.*(//' | sort -u)
fi
ctest --test-dir "$build" -L gpu --show-only=json-v1 2>/dev/null |
    python3 -c '
import json, os, re, sys
build, declared = sys.argv[1], set(sys.argv[2:])
rows, problems = [], []
for test in json.load(sys.stdin).get("tests", []):
    cmd = test.get("command") or []
    if test["name"].endswith("_NOT_BUILT") or not cmd:
        problems.append(test["name"].replace("_NOT_BUILT", ""))
        continue
    np = 0
    if os.path.basename(cmd[0]) in ("mpiexec", "mpirun", "srun"):
        for flag in ("-n", "-np"):
            if flag in cmd:
                np = int(cmd[cmd.index(flag) + 1])
        cmd = [c for c in cmd[1:] if os.path.isabs(c) and os.path.isfile(c)]
    if not cmd or not os.path.isfile(cmd[0]):
        problems.append(test["name"])
        continue
    exe = os.path.relpath(cmd[0], build)
    if (np, exe) not in rows:
        rows.append((np, exe))
for name in sorted(declared - {os.path.basename(e) for _, e in rows}):
    problems.append(name)
if problems:
    names = sorted({re.sub(r"_np[0-9]+$", "", p) for p in problems})
    print("list_tests.sh: GPU test(s) not built in %s: %s (cmake --build %s --target %s)"
          % (build, " ".join(names), build, " ".join(names)), file=sys.stderr)
    sys.exit(2)
for np, exe in rows:
    print("%d\t%s" % (np, exe))
' "$build" "${declared[@]}"
